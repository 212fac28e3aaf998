/**
 * stepDownloadedFiles: the downloaded files each call of a step is decided against — the session's,
 * plus what the calls that may run before it or beside it would download, never added to the
 * session's own set.
 */
import { describe, expect, it } from "vitest";
import { type StepCall, stepDownloadedFiles } from "../../src/engine/permissions/step-downloads.js";

const serial = (command?: string): StepCall => ({ command, concurrent: false });
const beside = (command?: string): StepCall => ({ command, concurrent: true });

describe("stepDownloadedFiles", () => {
  const session: ReadonlySet<string> = new Set(["/work/old.sh"]);

  it("adds what every earlier call would download, and nothing of the call itself or later ones", () => {
    const of = stepDownloadedFiles(
      [
        serial("ls"),
        serial("curl -o a.sh https://x.test/a"),
        serial("sh a.sh"),
        serial("wget https://x.test/b.py"),
      ],
      session,
    );
    expect(of(0)).toBe(session);
    expect(of(1)).toBe(session);
    expect([...of(2)]).toEqual(["/work/old.sh", "a.sh"]);
    expect([...of(3)]).toEqual(["/work/old.sh", "a.sh"]);
    expect([...session]).toEqual(["/work/old.sh"]);
  });

  it("adds, for a call that runs beside its neighbours, what later ones that run beside it would download", () => {
    const of = stepDownloadedFiles(
      [beside("sh a.sh"), serial("curl -o s.sh https://x.test/s"), beside("curl -o a.sh https://x.test/a")],
      session,
    );
    expect([...of(0)]).toEqual(["/work/old.sh", "a.sh"]);
    expect([...of(1)]).toEqual(["/work/old.sh"]);
    expect([...of(2)]).toEqual(["/work/old.sh", "s.sh"]);
  });

  it("foresees nothing of a call with no command", () => {
    const of = stepDownloadedFiles([serial(), beside(), serial("sh a.sh")], session);
    expect(of(2)).toBe(session);
  });

  it("foresees the folder of an extraction whose archive the session or an earlier call downloads", () => {
    const of = stepDownloadedFiles(
      [
        serial("curl -o a.tgz https://x.test/a.tgz"),
        serial("tar xzf a.tgz -C a"),
        serial("unzip old.zip -d o"),
        serial("unzip other.zip -d p"),
        serial("bash a/run.sh"),
      ],
      new Set(["/work/old.zip"]),
    );
    expect([...of(4)]).toEqual(["/work/old.zip", "a.tgz", "a/", "o/"]);
  });
});
