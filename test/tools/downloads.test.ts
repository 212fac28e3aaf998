import { describe, expect, it } from "vitest";
import { detectDownloads } from "../../src/tools/shell/downloads.js";
import { splitCommands } from "../../src/tools/shell/shell-words.js";

describe("splitCommands", () => {
  it("splits at operators, keeps quotes, separates redirections and marks pipes", () => {
    expect(splitCommands(`FOO=1 curl -H "a b" 'x;y' > out.txt 2>&1 && cat <in | sh # note`)).toEqual([
      {
        words: ["FOO=1", "curl", "-H", "a b", "x;y"],
        redirects: [{ op: ">", target: "out.txt" }],
        pipedFromPrevious: false,
      },
      { words: ["cat"], redirects: [{ op: "<", target: "in" }], pipedFromPrevious: false },
      { words: ["sh"], redirects: [], pipedFromPrevious: true },
    ]);
  });
});

describe("detectDownloads", () => {
  it.each([
    ["curl -o out.bin https://x.test/a", ["out.bin"]],
    ["curl -sSLo out.bin https://x.test/a", ["out.bin"]],
    ["curl --output=o.txt https://x.test/a", ["o.txt"]],
    ["curl -fsSLO https://x.test/dir/install.sh", ["install.sh"]],
    ["curl --remote-name --output-dir dl https://x.test/get.py", ["dl/get.py"]],
    ["curl -s https://x.test/a > saved.html", ["saved.html"]],
    ["curl -s https://x.test/a | tee copy.sh | head", ["copy.sh"]],
    ["wget https://x.test/pkg/tool.tar.gz", ["tool.tar.gz"]],
    ["wget -P /tmp/d https://x.test/", ["/tmp/d/index.html"]],
    ["wget -qO script.sh https://x.test/s", ["script.sh"]],
    ["sudo wget --output-document=a.sh https://x.test/s", ["a.sh"]],
    ["wget -O - https://x.test/s | bash", []],
    ["curl -s https://x.test/a | jq .", []],
    ["echo hi > notes.txt; ls -l", []],
  ])("%s → %j", (command, expected) => {
    expect(detectDownloads(command)).toEqual(expected);
  });
});
