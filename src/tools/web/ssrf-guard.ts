/**
 * SSRF guard for web_fetch: hostnames are resolved here (not by the HTTP client), every address
 * is classified with ipaddr.js, and only global unicast addresses pass — loopback, link-local,
 * private, unique-local, multicast, unspecified, carrier-grade NAT and the other special ranges
 * are refused (IPv4, IPv6 and IPv4-mapped IPv6 alike) unless the policy allows private targets.
 * ipaddr.js calls the deprecated IPv4-compatible IPv6 block (::/96, e.g. ::7f00:1, which is what
 * the URL parser makes of [::127.0.0.1]) ordinary unicast; it is refused here as its own range.
 * So is Azure's wire server, 168.63.129.16: a public address that, from an Azure VM, is the
 * platform's own service endpoint (VM agent, DHCP, DNS, health probes), not the internet.
 * The caller connects to the returned address, so DNS cannot change between check and connect.
 * A lookup is raced against the caller's signal (its deadline and interrupt): getaddrinfo cannot
 * be cancelled, so a DNS server that never answers would otherwise hold the call past both.
 */
import { raceAbort } from "../../core/abort.js";
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { networkFailure } from "./network-failure.js";

/**
 * Resolves a hostname to its addresses (injectable for tests). `signal` ends the wait: a resolver
 * may stop early on it, and checkHost stops waiting for the answer either way.
 */
export type Resolver = (hostname: string, signal?: AbortSignal) => Promise<readonly string[]>;

/** The system resolver (getaddrinfo, so /etc/hosts applies); getaddrinfo cannot be cancelled. */
export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** Which addresses a fetch may reach. */
export interface AddressPolicy {
  /** Allow loopback / private / link-local … targets (config tools.web_fetch.allow_private). */
  readonly allowPrivate: boolean;
  /** Per-address exception consulted for special-range addresses; `hop` 0 is the first request. */
  readonly allowAddress?: (address: string, hop: number) => boolean;
}

/** Thrown when a URL's host is, or resolves to, a refused address. */
export class BlockedAddressError extends Error {
  override readonly name = "BlockedAddressError";
}

/** A checked address to connect to. */
export interface PinnedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

const RANGE_NAMES: Readonly<Record<string, string>> = {
  loopback: "a loopback",
  private: "a private",
  linkLocal: "a link-local",
  uniqueLocal: "a unique-local",
  multicast: "a multicast",
  unspecified: "an unspecified",
  broadcast: "a broadcast",
  carrierGradeNat: "a carrier-grade NAT",
  ipv4Compatible: "a deprecated IPv4-compatible IPv6",
  azureWireServer: "an Azure platform (wire server)",
};

/** ::/96, IPv4-compatible IPv6 (RFC 4291 §2.5.5.1, deprecated); :: and ::1 in it keep their own names. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR("::/96");

/** 168.63.129.16/32, Azure's wire server: public by its number, the cloud platform's by its use. */
const AZURE_WIRE_SERVER = ipaddr.parseCIDR("168.63.129.16/32");

/**
 * The range of a parsed address: ipaddr.js's, with ::/96 as "ipv4Compatible" and 168.63.129.16 as
 * "azureWireServer" rather than unicast.
 */
function rangeOf(parsed: ipaddr.IPv4 | ipaddr.IPv6): string {
  const range = parsed.range();
  if (range !== "unicast") return range;
  if (parsed.kind() === "ipv6") return parsed.match(IPV4_COMPATIBLE) ? "ipv4Compatible" : range;
  return parsed.match(AZURE_WIRE_SERVER) ? "azureWireServer" : range;
}

/** The range of an address ("unicast" for ordinary public addresses), IPv4-mapped unwrapped. */
export function addressRange(address: string): string {
  return rangeOf(ipaddr.process(address));
}

/** Host part of a URL without IPv6 brackets. */
export function bareHostname(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

function checkAddress(address: string, hop: number, policy: AddressPolicy, host: string): PinnedAddress {
  if (!ipaddr.isValid(address))
    throw new BlockedAddressError(`${host} resolved to an invalid address ${address}`);
  const parsed = ipaddr.process(address);
  const range = rangeOf(parsed);
  const family = parsed.kind() === "ipv4" ? 4 : 6;
  if (range === "unicast" || policy.allowPrivate || policy.allowAddress?.(parsed.toString(), hop)) {
    return { address: parsed.toString(), family };
  }
  const what = RANGE_NAMES[range] ?? `a special-purpose (${range})`;
  const via = host === address ? "" : ` (${host} resolves to ${address})`;
  throw new BlockedAddressError(
    `refusing to fetch ${what} address${via}: web_fetch only reaches public internet addresses`,
  );
}

/**
 * Check a host that is an IP address, which needs no lookup: the address to pin the connection
 * to, or BlockedAddressError when it is refused; undefined for a name, which only checkHost's
 * lookup can check. Touches no network, so it may run before a hop is authorised.
 */
export function checkAddressHost(
  hostname: string,
  hop: number,
  policy: AddressPolicy,
): PinnedAddress | undefined {
  return ipaddr.isValid(hostname) ? checkAddress(hostname, hop, policy, hostname) : undefined;
}

/**
 * Resolve `hostname` and check every address it has; returns the address to pin the connection
 * to. Throws BlockedAddressError when any address is refused or nothing resolves; when `signal`
 * aborts first (the call's deadline or interrupt), the lookup is abandoned and its reason thrown.
 */
export async function checkHost(
  hostname: string,
  hop: number,
  policy: AddressPolicy,
  resolver: Resolver = systemResolver,
  signal?: AbortSignal,
): Promise<PinnedAddress> {
  const literal = checkAddressHost(hostname, hop, policy);
  if (literal !== undefined) return literal;
  signal?.throwIfAborted();
  let addresses: readonly string[];
  try {
    const lookup = resolver(hostname, signal);
    const raced = signal ? await raceAbort(lookup, signal) : { aborted: false as const, value: await lookup };
    if (raced.aborted) throw signal?.reason;
    addresses = raced.value;
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new BlockedAddressError(`could not resolve ${hostname}: ${networkFailure(error)}`);
  }
  if (addresses.length === 0) throw new BlockedAddressError(`${hostname} has no addresses`);
  const checked = addresses.map((address) => checkAddress(address, hop, policy, hostname));
  return checked[0] as PinnedAddress;
}
