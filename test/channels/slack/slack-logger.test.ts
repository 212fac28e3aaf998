import pino from "pino";
import { describe, expect, it } from "vitest";
import { sdkLogger } from "../../../src/channels/slack/slack-logger.js";

describe("sdkLogger", () => {
  it("writes SDK messages at pino's level, and does not put together those below it", () => {
    const lines: { level: number; msg: string; component: string }[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const sdk = sdkLogger(logger, "slack-web");
    let built = 0;
    const part = {
      toJSON: () => {
        built += 1;
        return { detail: 1 };
      },
    };
    sdk.debug("http request result:", part);
    expect(built).toBe(0);
    sdk.info("connected", part);
    expect(built).toBe(1);
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, msg: 'connected {"detail":1}', component: "slack-web" }),
    ]);
    expect(sdk.getLevel()).toBe("info");
  });
});
