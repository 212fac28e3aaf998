import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAITranscriber } from "../../src/attachments/transcriber.js";
import { useNock } from "../support/nock-hooks.js";

useNock();
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stt-"));
  await writeFile(join(dir, "voice.ogg"), "OggS-voice-bytes");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("openAITranscriber", () => {
  it("POSTs multipart file + model to <base>/audio/transcriptions with the bearer key", async () => {
    let body = "";
    let contentType = "";
    nock("https://stt.example.test", { reqheaders: { authorization: "Bearer gsk-test" } })
      .post("/openai/v1/audio/transcriptions", (raw: string) => {
        body = typeof raw === "string" ? raw : JSON.stringify(raw);
        return true;
      })
      .reply(function reply() {
        contentType = String(this.req.headers["content-type"]);
        return [200, { text: " hello from the voice note " }];
      });
    const transcriber = openAITranscriber({
      model: "whisper-large-v3",
      baseURL: "https://stt.example.test/openai/v1/",
      apiKey: "gsk-test",
    });
    const text = await transcriber.transcribe({
      absolute: join(dir, "voice.ogg"),
      name: "voice.ogg",
      mediaType: "audio/ogg",
      maxBytes: 1024,
    });
    expect(text).toBe("hello from the voice note");
    expect(contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(body).toMatch(/name="model"\r\n\r\nwhisper-large-v3\r\n/);
    expect(body).toMatch(
      /name="file"; filename="voice.ogg"\r\nContent-Type: audio\/ogg\r\n\r\nOggS-voice-bytes\r\n/,
    );
  });

  it("fails with a short reason on an HTTP error", async () => {
    nock("https://stt.example.test")
      .post("/v1/audio/transcriptions")
      .times(2)
      .reply(500, { error: { message: "boom" } });
    const transcriber = openAITranscriber({ model: "whisper-1", baseURL: "https://stt.example.test/v1" });
    await expect(
      transcriber.transcribe({ absolute: join(dir, "voice.ogg"), name: "voice.ogg", maxBytes: 1024 }),
    ).rejects.toThrow("the transcription service answered HTTP 500");
  });

  it("refuses, unsent, a recording larger now than the size it was checked for (a command grew it)", async () => {
    // No endpoint is mocked: a request would fail with a connection error instead.
    const transcriber = openAITranscriber({ model: "whisper-1", baseURL: "https://stt.example.test/v1" });
    await expect(
      transcriber.transcribe({ absolute: join(dir, "voice.ogg"), name: "voice.ogg", maxBytes: 10 }),
    ).rejects.toThrow("it is 16 B now, more than the 10 B it was checked for");
  });
});
