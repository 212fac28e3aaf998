import { describe, expect, it } from "vitest";
import { compileHardDenyRules, matchHardDeny } from "../../src/engine/permissions/hard-deny.js";

const rules = compileHardDenyRules([]);
const ruleFor = (command: string) => matchHardDeny(rules, { command })?.rule;

const BLOCK_DEVICE = "raw write to a block device";
const FORK_BOMB = "fork bomb";

describe("matchHardDeny's built-in patterns", () => {
  it.each([
    ["dd if=/dev/zero of=/dev/sda bs=1M", BLOCK_DEVICE],
    ["dd if=x dd of=/dev/nvme0n1", BLOCK_DEVICE],
    ["dd of=/dev/null; dd of=/dev/sdb", BLOCK_DEVICE],
    ["DD OF=/DEV/SDA", BLOCK_DEVICE],
    ["echo x > /dev/sda", BLOCK_DEVICE],
    [":(){ :|:& };:", FORK_BOMB],
    [": ( ) { : | : & } ; :", FORK_BOMB],
    [":(){ :|& };:", FORK_BOMB],
  ])("denies %s", (command, rule) => {
    expect(ruleFor(command)).toBe(rule);
  });

  it.each(["dd if=/dev/sda of=/dev/null", "dd if=a; echo of=/dev/sda", ":(){ echo hi; }", ":(){ :|:&"])(
    "leaves %s alone",
    (command) => {
      expect(ruleFor(command)).toBeUndefined();
    },
  );

  it("reads a model-sized command of many unfinished starts in one pass", () => {
    // Each unfinished `dd` or `:(){` read on to the end of the command: tens of seconds here.
    const dds = "dd ".repeat(70_000);
    expect(ruleFor(dds)).toBeUndefined();
    expect(ruleFor(`${dds}of=/dev/sda`)).toBe(BLOCK_DEVICE);
    const starts = ":(){".repeat(50_000);
    expect(ruleFor(starts)).toBeUndefined();
    expect(ruleFor(`${starts}}; :(){ :|:& };:`)).toBe(FORK_BOMB);
    expect(ruleFor(`:(){ ${":|&".repeat(70_000)}`)).toBeUndefined();
  });
});

describe("matchHardDeny's configured patterns", () => {
  const configured = compileHardDenyRules(["deploy/"]);

  it("judges web_fetch's save_to as the target it is, like write_file's path", () => {
    expect(matchHardDeny(configured, { path: "deploy/run.sh" })?.subject).toBe("deploy/run.sh");
    expect(
      matchHardDeny(configured, { url: "https://example.com/x", save_to: "deploy/run.sh" })?.subject,
    ).toBe("deploy/run.sh");
  });

  it("leaves content arguments alone", () => {
    expect(matchHardDeny(configured, { path: "notes.md", content: "see deploy/run.sh" })).toBeUndefined();
  });

  it("judges the targets of a call's listed items, like save_skill's bundled files and where they are copied from", () => {
    const bundled = (file: Record<string, string>) => ({ name: "ship", files: [file] });
    expect(matchHardDeny(configured, bundled({ path: "run.sh", from: "deploy/run.sh" }))?.subject).toBe(
      "deploy/run.sh",
    );
    expect(matchHardDeny(configured, bundled({ path: "deploy/run.sh", content: "x" }))?.subject).toBe(
      "deploy/run.sh",
    );
    expect(matchHardDeny(rules, bundled({ path: "env.txt", from: ".env" }))?.subject).toBe(".env");
    expect(
      matchHardDeny(configured, bundled({ path: "notes.md", content: "see deploy/run.sh" })),
    ).toBeUndefined();
  });

  it("judges arguments nested as deep as the model likes", () => {
    const deep = JSON.parse(`${'{"a":['.repeat(100_000)}{"path":"deploy/x"}${"]}".repeat(100_000)}`);
    expect(matchHardDeny(configured, deep)?.subject).toBe("deploy/x");
  });
});
