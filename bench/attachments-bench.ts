/**
 * Attachment benchmark (issue 16): the per-message cost of what people send, from the fake Bot
 * API's file download to what the model call gets. Two subjects: a 5 MB photo (download, image
 * probe, then the vision model's outbound view with the image as a data URL) and a 50-page PDF
 * (download, then text extraction in a worker thread — the cache beside the file removed before
 * each run — and once more from the cache). Per subject: median and max ms over the runs, the RSS
 * delta, and the longest event-loop block measured with monitorEventLoopDelay (goal: ≤ 50 ms).
 * Writes bench/results/attachments.json and bench/results/attachments.md.
 */
import { conversationWorkspace } from "../src/tools/files/conversation-workspace.js";
import { createWorkspacePaths } from "../src/tools/files/workspace-paths.js";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { deflateSync } from "node:zlib";
import { Api } from "grammy";
import pino from "pino";
import { AttachmentIntake } from "../src/attachments/inbound-attachments.js";
import { TelegramFiles } from "../src/channels/telegram/telegram-files.js";
import { telegramMessageSchema } from "../src/channels/telegram/telegram-inbound.js";
import { buildOutbound } from "../src/engine/outbound.js";
import { prepareMedia } from "../src/engine/outbound-media.js";
import { createRequest } from "../src/core/request.js";
import type { ThreadTarget } from "../src/core/thread-target.js";
import { startFakeTelegram } from "../test/fakes/fake-telegram/fake-telegram.js";
import { tinyPdf } from "../test/support/tiny-pdf.js";
import { hostLine, percentile, round1, writeResults } from "./support/report.js";
import { OPEN_UPLOADS } from "../test/support/test-upload-gate.js";

const RUNS = 5;
const GOAL_BLOCK_MS = 50;
const USER = { id: 700_001, first_name: "Bench" };
const CHAT = { id: USER.id, type: "private" as const, first_name: "Bench" };

interface Figures {
  readonly subject: string;
  readonly inputMB: number;
  readonly medianMs: number;
  readonly maxMs: number;
  readonly rssDeltaMB: number;
  readonly maxEventLoopBlockMs: number;
  readonly p99EventLoopDelayMs: number;
}

/** A real PNG of random pixels (incompressible), about `megabytes` big. */
function noisePng(megabytes: number): Buffer {
  const side = Math.ceil(Math.sqrt((megabytes * 1024 * 1024) / 3));
  const rows = Buffer.alloc((side * 3 + 1) * side);
  randomBytes(rows.length).copy(rows);
  for (let y = 0; y < side; y++) rows[y * (side * 3 + 1)] = 0;
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (data: Buffer): number => {
    let c = 0xffffffff;
    for (const byte of data) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer): Buffer => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, "latin1");
    const tail = Buffer.alloc(4);
    tail.writeUInt32BE(crc(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, tail]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows, { level: 0 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

function fiftyPagePdf(): Buffer {
  return tinyPdf(
    Array.from({ length: 50 }, (_, page) => ({
      kind: "text" as const,
      lines: Array.from(
        { length: 40 },
        (_, line) => `Page ${page + 1}, line ${line + 1}: the quick brown fox jumps over the lazy dog.`,
      ),
    })),
  );
}

async function measure(subject: string, inputBytes: number, once: () => Promise<void>): Promise<Figures> {
  await once(); // warm-up: module loading and JIT are not per-message costs
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const times: number[] = [];
  histogram.enable();
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await once();
    times.push(performance.now() - start);
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }
  histogram.disable();
  times.sort((a, b) => a - b);
  return {
    subject,
    inputMB: round1(inputBytes / 1_048_576),
    medianMs: round1(percentile(times, 50)),
    maxMs: round1(times.at(-1) ?? 0),
    rssDeltaMB: round1((rssPeak - rssBefore) / 1_048_576),
    // The histogram's max is the longest a timer fired late: the longest block of the loop.
    maxEventLoopBlockMs: round1(histogram.max / 1e6),
    p99EventLoopDelayMs: round1(histogram.percentile(99) / 1e6),
  };
}

/** Run the benchmark and write its results. */
export async function run(): Promise<Record<string, unknown>> {
  const tg = await startFakeTelegram();
  const workspace = await mkdtemp(path.join(os.tmpdir(), "attachments-bench-"));
  const logger = pino({ level: "silent" });
  try {
    const files = new TelegramFiles({
      api: new Api(tg.token, { apiRoot: tg.apiRoot }),
      token: tg.token,
      apiRoot: tg.apiRoot,
      workspace: createWorkspacePaths({ root: workspace }),
      maxBytes: 20 * 1_048_576,
      uploads: OPEN_UPLOADS,
    });
    const intake = new AttachmentIntake({ workspace: createWorkspacePaths({ root: workspace }), logger });
    const target: ThreadTarget = { platform: "telegram", workspace: "tg", channel: String(CHAT.id) };
    const deliver = (input: Parameters<typeof tg.sendUserMessage>[0]) =>
      telegramMessageSchema.parse(tg.sendUserMessage(input).message);
    const photo = noisePng(5);
    const pdf = fiftyPagePdf();
    const photoMessage = deliver({ chat: CHAT, from: USER, photo: { content: photo } });
    const pdfMessage = deliver({
      chat: CHAT,
      from: USER,
      document: { content: pdf, name: "report.pdf", mime: "application/pdf" },
    });
    const media = {
      workspace: conversationWorkspace(createWorkspacePaths({ root: workspace })),
      vision: true as const,
      imageMaxBytes: 8 * 1_048_576,
    };
    // The turn that sends the photo: the chat's own, whose uploads it may read.
    const request = createRequest({
      prompt: "look",
      messages: [],
      sessionId: "bench",
      platform: "telegram",
      model: "gpt-4o",
      workspace: { root: workspace, context: "" },
      requester: { userId: String(USER.id), displayName: "bench" },
      mode: "interactive",
      surface: "channel",
      metadata: { target },
    });

    const photoFigures = await measure("5 MB photo → vision request", photo.length, async () => {
      const saved = await files.download(photoMessage, target);
      const result = await intake.process(saved.files, target, "1");
      const messages = [{ role: "user" as const, content: "look", attachments: result.attachments }];
      const out = buildOutbound({
        instructions: "",
        messages,
        media: await prepareMedia(messages, request, media),
      });
      if (JSON.stringify(out).length < photo.length) throw new Error("the image did not reach the request");
    });
    const pdfFigures = await measure("50-page PDF → text (worker)", pdf.length, async () => {
      const saved = await files.download(pdfMessage, target);
      await rm(path.join(workspace, `${saved.files[0]!.path}.txt`), { force: true });
      const result = await intake.process(saved.files, target, "1");
      if (!result.sections[0]?.includes("(50 page(s); text extracted"))
        throw new Error("the PDF text is missing");
    });
    const cachedFigures = await measure("50-page PDF → text (cached extract)", pdf.length, async () => {
      const saved = await files.download(pdfMessage, target);
      await intake.process(saved.files, target, "1");
    });
    const rows = [photoFigures, pdfFigures, cachedFigures];
    const meetsGoal = rows.every((row) => row.maxEventLoopBlockMs <= GOAL_BLOCK_MS);
    const generatedAt = new Date().toISOString();
    const results = { generatedAt, runs: RUNS, goalMaxBlockMs: GOAL_BLOCK_MS, meetsGoal, rows };
    const markdown = [
      "# Attachments benchmark",
      "",
      hostLine(generatedAt),
      "",
      `Per message, download from the fake Bot API + processing; ${RUNS} runs after a warm-up.`,
      "",
      "| subject | input MB | median ms | max ms | RSS delta MB | max event-loop block ms |",
      "|---|---|---|---|---|---|",
      ...rows.map(
        (r) =>
          `| ${r.subject} | ${r.inputMB} | ${r.medianMs} | ${r.maxMs} | ${r.rssDeltaMB} | ${r.maxEventLoopBlockMs} |`,
      ),
      "",
      `Goal: no event-loop block over ${GOAL_BLOCK_MS} ms — ${meetsGoal ? "✅ met" : "❌ not met"}.`,
      "The fake Bot API serves the downloads from this same process, so its work counts in the loop figures too.",
      "",
    ].join("\n");
    await writeResults("attachments", results, markdown);
    return results;
  } finally {
    await tg.close();
    await rm(workspace, { recursive: true, force: true });
  }
}
