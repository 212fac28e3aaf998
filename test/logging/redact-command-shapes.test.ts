/**
 * scrubSecrets on secrets in command-line and header shapes: secret flags with a space or `=`
 * before the value, `-u user:pass`, mysql's `-pPASS` (only after a mysql client program: `mkdir -p`
 * and `cp -p` stay), cookie headers and Stripe-style keys; each rule stays linear on a long
 * adversarial input (checked by size, not by a clock) and keeps JSON text valid.
 */
import { describe, expect, it } from "vitest";
import { scrubSecrets } from "../../src/logging/redact.js";

describe("scrubSecrets: command-line and header shapes", () => {
  it.each([
    ["mytool --password Sup3rS3cret --token abcd1234efgh", "mytool --password [redacted] --token [redacted]"],
    ["mytool --passwd=Sup3rS3cret --pass Sup3rS3cret", "mytool --passwd=[redacted] --pass [redacted]"],
    ["cli --secret  Sup3rS3cret --api-key Sup3rS3cret", "cli --secret  [redacted] --api-key [redacted]"],
    [
      "cli --apikey Sup3rS3cret --access-token Sup3rS3cret",
      "cli --apikey [redacted] --access-token [redacted]",
    ],
    ["cli --auth Sup3rS3cret --auth-token=Sup3rS3cret", "cli --auth [redacted] --auth-token=[redacted]"],
    ['cli --password "Sup3r S3cret" next', 'cli --password "[redacted]" next'],
    ["curl -u admin:Sup3rS3cret https://x.example", "curl -u admin:[redacted] https://x.example"],
    ["curl -uadmin:Sup3rS3cret https://x.example", "curl -uadmin:[redacted] https://x.example"],
    ["curl --user admin:Sup3rS3cret https://x.example", "curl --user admin:[redacted] https://x.example"],
    ["mysql -h db -u root -pSup3rS3cret app", "mysql -h db -u root -p[redacted] app"],
    ["mysqldump -pSup3rS3cret app > dump.sql", "mysqldump -p[redacted] app > dump.sql"],
    ["/usr/bin/mariadb -p'Sup3rS3cret' app", "/usr/bin/mariadb -p'[redacted]' app"],
    ["curl -H 'Cookie: session=Sup3rS3cret; id=42' https://x", "curl -H 'Cookie: [redacted]' https://x"],
    ["Set-Cookie: session=Sup3rS3cret; Path=/; HttpOnly", "Set-Cookie: [redacted]"],
    ["STRIPE=sk_live_51HAbCdEfGhIjKlMn charge", "STRIPE=sk_live_[redacted] charge"],
    ["key sk_test_4eC39HqLyjWDarjtT1zdp7dc", "key sk_test_[redacted]"],
    ["key rk_live_51HAbCdEfGhIjKlMn", "key rk_live_[redacted]"],
    ["hook whsec_abcdEFGH1234ijkl", "hook whsec_[redacted]"],
  ])("redacts %s", (text, expected) => {
    expect(scrubSecrets(text)).toBe(expected);
  });

  it.each([
    "mkdir -p build",
    "cp -p a b",
    "ssh -p 2222 host",
    "mysql -p app; mkdir -p build",
    "mysql -h db app && cp -pR src dst",
    "git push -u origin main",
    "sort -u names.txt",
    "cli --token --verbose",
    "cli --passive mode",
    "pk_live_51HAbCdEfGhIjKlMn is publishable",
  ])("leaves %s alone", (text) => {
    expect(scrubSecrets(text)).toBe(text);
  });

  it("keeps JSON-stringified arguments valid JSON", () => {
    const args = JSON.stringify({
      command: `mytool --password "Sup3r S3cret" -u admin:Sup3rS3cret -H "Cookie: a=Sup3rS3cret" && mysql -p"Sup3rS3cret" x`,
    });
    const out = scrubSecrets(args);
    expect(out).not.toContain("Sup3r");
    expect(JSON.parse(out)).toEqual({
      command: `mytool --password "[redacted]" -u admin:[redacted] -H "Cookie: [redacted]" && mysql -p"[redacted]" x`,
    });
    expect(scrubSecrets(out)).toBe(out);
  });

  // Each input is built to make a backtracking rule quadratic or worse: at this size such a rule
  // would not end within the test's timeout, a linear one takes milliseconds.
  it.each([
    ["--password ", 40_000],
    ["--token=", 40_000],
    ["-u a", 40_000],
    ["-ua:a:", 40_000],
    ["--user ", 40_000],
    ["cookie: ", 40_000],
    ["Cookie:\t", 40_000],
    ["mysql ", 40_000],
    ["mysql -p", 40_000],
    ["sk_live_", 40_000],
    ["whsec_", 40_000],
    ["-p\\", 40_000],
  ])("stays linear on %j repeated %i times", (unit, times) => {
    const text = `${unit.repeat(times)}"`;
    expect(scrubSecrets(text).length).toBeGreaterThan(0);
    const tail = `${"a".repeat(200_000)}`;
    expect(scrubSecrets(`${unit}${tail}`).length).toBeGreaterThan(0);
  });
});
