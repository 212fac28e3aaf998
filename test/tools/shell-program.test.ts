import { describe, expect, it } from "vitest";
import { innerScript, programOf } from "../../src/tools/shell/shell-program.js";

describe("programOf", () => {
  it("looks past assignments and wrappers with their options", () => {
    expect(programOf(["A=1", "sudo", "-u", "bob", "timeout", "5", "bash", "-c", "ls"])).toEqual({
      program: "bash",
      invoked: "bash",
      args: ["-c", "ls"],
    });
  });
});

describe("innerScript", () => {
  it("finds the script after a shell's -c, alone or in an option cluster, and eval's words", () => {
    expect(innerScript("sh", ["-c", "rm -rf /"])).toBe("rm -rf /");
    expect(innerScript("bash", ["-lc", "--", "ls"])).toBe("ls");
    expect(innerScript("zsh", ["-xce", "ls"])).toBe("ls");
    expect(innerScript("eval", ["rm", "-rf", "/"])).toBe("rm -rf /");
  });

  it("finds none without a -c cluster", () => {
    expect(innerScript("bash", ["-l", "script.sh"])).toBeUndefined();
    expect(innerScript("bash", ["--rcfile", "x"])).toBeUndefined();
    expect(innerScript("python3", ["-c", "print(1)"])).toBeUndefined();
    expect(innerScript("sh", ["-c1", "ls"])).toBeUndefined();
  });

  it("reads a long -ccc…c1 word of a model's command as no -c cluster", () => {
    // /^-[A-Za-z]*c[A-Za-z]*$/ tried every `c` as the split point: about a minute at this size.
    expect(innerScript("sh", [`-${"c".repeat(200_000)}1`, "ls"])).toBeUndefined();
    expect(innerScript("sh", [`-${"c".repeat(200_000)}`, "ls"])).toBe("ls");
  });
});
