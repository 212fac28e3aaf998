import { describe, expect, it } from "vitest";
import { scrubSecrets } from "../../src/logging/redact.js";

describe("scrubSecrets: common credential shapes", () => {
  it.each([
    ["GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 git push", "GITHUB_TOKEN=[redacted] git push"],
    ["DB_PASSWORD=hunter2hunter2", "DB_PASSWORD=[redacted]"],
    ['export DB_PASSWORD="hunter2hunter2"', 'export DB_PASSWORD="[redacted]"'],
    ["AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS_SECRET_ACCESS_KEY=[redacted]"],
    ["OPENAI_API_KEY=gw-live-3f9a8b7c6d5e make run", "OPENAI_API_KEY=[redacted] make run"],
    ["STRIPE_SECRET=abc123; next", "STRIPE_SECRET=[redacted]; next"],
  ])("redacts a secret-named assignment: %s", (text, expected) => {
    expect(scrubSecrets(text)).toBe(expected);
  });

  it.each([
    ["curl https://api.example.com/v1?api_key=abcd1234secret&x=1", "?api_key=[redacted]&x=1"],
    ["https://api.example.com/v1?access_token=abcd1234secret", "?access_token=[redacted]"],
    ["https://maps.example.com/?q=x&key=abcd1234secret#top", "&key=[redacted]#top"],
    [
      "https://x.example.com/a?apikey=k1&token=t1&secret=s1&password=p1&sig=g1",
      "?apikey=[redacted]&token=[redacted]&secret=[redacted]&password=[redacted]&sig=[redacted]",
    ],
    ["https://gw.example.com/v1?api_key=gw-live-3f9a8b7c6d5e", "?api_key=[redacted]"],
  ])("redacts secret-named URL query parameters: %s", (text, expected) => {
    const out = scrubSecrets(text);
    expect(out).toContain(expected);
    expect(out).not.toMatch(/abcd1234secret|gw-live|k1|t1&|s1&|p1&|g1$/);
  });

  it.each([
    [
      "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/org/repo.git",
      "https://ghp_[redacted]@github.com/org/repo.git",
    ],
    ["token gho_abcdefghijklmnopqrstuvwxyz0123456789", "token gho_[redacted]"],
    ["ghs_abcdefghijklmnopqrstuvwxyz0123456789 expired", "ghs_[redacted] expired"],
    [
      "github_pat_11ABCDEFG0abcdefghijklmnop_qrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV",
      "github_pat_[redacted]",
    ],
    ["key AIzaSyA-abcdefghijklmnopqrstuvwxyz012345 denied", "key AIza[redacted] denied"],
    [
      "POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX failed",
      "POST https://hooks.slack.com/services/[redacted] failed",
    ],
    ["bot123456789%3AAAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ", "bot[redacted]"],
  ])("redacts GitHub, Google, Slack webhook and encoded Telegram tokens: %s", (text, expected) => {
    expect(scrubSecrets(text)).toBe(expected);
  });

  it.each([
    ["xoxc-1234567890-abcdef and d=xoxd-abcdef123456", "xoxc-[redacted] and d=xoxd-[redacted]"],
    [
      "wss://wss-primary.slack.com/link/?ticket=5b3c2a1d-77e6&app_id=A0123",
      "wss://wss-primary.slack.com/link/?ticket=[redacted]&app_id=A0123",
    ],
    ['{"headers":{"x-api-key":"k3yvalue12345"}}', '{"headers":{"x-api-key":"[redacted]"}}'],
    [
      '{"msg":"refused: {\\"X-Api-Key\\":\\"k3yvalue12345\\"}"}',
      '{"msg":"refused: {\\"X-Api-Key\\":\\"[redacted]\\"}"}',
    ],
    ['{"Authorization":"Token abcdefghijkl"}', '{"Authorization":"Token [redacted]"}'],
    ["gitlab refused glpat-abcdefghij0123456789 (expired)", "gitlab refused glpat-[redacted] (expired)"],
    ["HF said hf_abcdefghijklmnopqrstuvwxyzABCD is invalid", "HF said hf_[redacted] is invalid"],
  ])(
    "redacts Slack client tokens, a Socket Mode ticket, JSON credential headers, GitLab and Hugging Face tokens: %s",
    (text, expected) => {
      expect(scrubSecrets(text)).toContain(expected);
    },
  );

  it.each([
    "max_tokens=4096 max_output_tokens=100 tokens=5 secrets=3",
    "GET /search?q=monkey&keyboard=1&page=2&tokens=3",
    "the token is in the password manager; keep the secret",
    "AWS_ACCESS_KEY_ID=AKIAEXAMPLE PWD=/home/ana",
    "ghp_short AIzaShort github_pat_x",
    "https://hooks.slack.com/ and https://api.slack.com/services/x",
    "mysql -u root -p db",
    "read_file /workspace/scripts/hf_dataset_preprocessing_pipeline.py: calls hf_hub_download_with_retries",
  ])("leaves ordinary text alone: %s", (text) => {
    expect(scrubSecrets(text)).toBe(text);
  });

  it("is idempotent and keeps a JSON line valid around escaped quotes", () => {
    const line = JSON.stringify({ msg: 'ran A_TOKEN="abc123" and x-api-key: "k3y" with ?token=t0k"' });
    const once = scrubSecrets(line);
    expect(scrubSecrets(once)).toBe(once);
    const parsed = JSON.parse(once) as { msg: string };
    expect(parsed.msg).not.toMatch(/abc123|k3y|t0k/);
  });

  it.each([
    ["Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "Bearer [redacted]"],
    ['{"error":"bad bearer abcdef0123456789"}', '{"error":"bad bearer [redacted]"}'],
    ["sent Basic dXNlcjpwYXNzd29yZA== twice", "sent Basic [redacted] twice"],
    ["Basic YWRtaW46c2VjcmV0", "Basic [redacted]"],
    ["header Bot MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs", "header Bot [redacted]"],
  ])("redacts a Bearer / Basic / Bot credential outside a header: %s", (text, expected) => {
    expect(scrubSecrets(text)).toBe(expected);
  });

  it.each([
    "Basic Information → App-Level Tokens",
    "the bot requires an invite; the Bot permissions page",
    "Basic authentication failed; Bearer tokens expire",
    "BOT password-less login",
  ])("leaves prose after Bearer / Basic / Bot alone: %s", (text) => {
    expect(scrubSecrets(text)).toBe(text);
  });
});
