/**
 * Test support: a TCP proxy to a loopback server (redis-server) that can stop forwarding without
 * closing anything — a link gone silent (a stalled network, a frozen host) — and resume. It stalls
 * every link, new ones included, or only the links a test picks by what their client has sent.
 */
import net from "node:net";

/** One proxied connection, as a test picks it: what its client has sent so far (the first 64 KiB). */
export interface ProxiedLink {
  readonly sent: string;
}

const SENT_KEPT = 64 * 1024;

interface Link extends ProxiedLink {
  sent: string;
  readonly sockets: readonly [net.Socket, net.Socket];
}

/** A TCP proxy to the server on `port` (loopback) that can stop forwarding (reading nothing, closing nothing) and resume. */
export class StallingProxy {
  private readonly server: net.Server;
  private readonly links = new Set<Link>();
  private stalled = false;

  constructor(port: number) {
    this.server = net.createServer((client) => {
      const upstream = net.connect(port, "127.0.0.1");
      const link: Link = { sent: "", sockets: [client, upstream] };
      this.links.add(link);
      for (const socket of link.sockets) socket.on("error", () => undefined);
      client.on("data", (chunk: Buffer) => {
        if (link.sent.length < SENT_KEPT) link.sent += chunk.toString("latin1");
      });
      client.pipe(upstream);
      upstream.pipe(client);
      // After pipe(), which sets its source flowing: a new connection over a silent link is silent too.
      if (this.stalled) for (const socket of link.sockets) socket.pause();
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => {
        client.destroy();
        this.links.delete(link);
      });
    });
  }

  /** Start listening on loopback; resolves to the redis:// URL that goes through the proxy. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `redis://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  /**
   * Stop reading from either side: bytes stay in the kernel's buffers, no connection ends. Without
   * `which`, every link now open and every one opened until `resume`; with it, only the open links
   * it picks (new ones are forwarded). Returns how many links were stalled.
   */
  stall(which?: (link: ProxiedLink) => boolean): number {
    if (!which) this.stalled = true;
    let count = 0;
    for (const link of this.links) {
      if (which && !which(link)) continue;
      for (const socket of link.sockets) socket.pause();
      count++;
    }
    return count;
  }

  /** Forward again on every link. */
  resume(): void {
    this.stalled = false;
    for (const link of this.links) for (const socket of link.sockets) socket.resume();
  }

  async close(): Promise<void> {
    for (const link of this.links) for (const socket of link.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
