import { describe, expect, it } from "vitest";
import { detectDownloads } from "../../src/tools/shell/downloads.js";

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
    // Read as bash reads it: quotes, backslashes and ANSI-C quoting hide nothing.
    ["$'\\x63url' -o x.sh https://x.test/x", ["x.sh"]],
    ["c\\url -s https://x.test/a 2>&1 > 'saved page.html'", ["saved page.html"]],
    ["env A=1 w''get -qO s.sh https://x.test/s", ["s.sh"]],
  ])("%s → %j", (command, expected) => {
    expect(detectDownloads(command)).toEqual(expected);
  });

  it("lists every target of a tee with 200,000 of them (none spread into one call)", () => {
    const files = Array.from({ length: 200_000 }, (_, i) => `f${i}`);
    expect(detectDownloads(`curl -s https://x.test/a | tee ${files.join(" ")}`)).toHaveLength(200_000);
  });
});
