/**
 * How a failed Slack call is classified while connecting: an error Slack answers about itself
 * (internal_error, service_unavailable, …) is Slack unavailable for now, retried — for the bot
 * token's auth.test as for Socket Mode's apps.connections.open — while a refused token is not.
 */
import { webApi } from "@slack/bolt";
import { afterEach, expect, it } from "vitest";
import { slackFailure, socketModeFailure } from "../../../src/channels/slack/slack-failure.js";
import type { ServiceFailure } from "../../../src/core/failure.js";
import { startFakeSlack } from "../../fakes/fake-slack/index.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The error the real Web API client throws for auth.test answered with each of `codes`. */
async function authTestErrors(...codes: string[]): Promise<unknown[]> {
  const fake = await startFakeSlack();
  cleanups.push(() => fake.close());
  fake.state.fail("auth.test", ...codes);
  const client = new webApi.WebClient(fake.state.botToken, {
    slackApiUrl: fake.apiUrl,
    retryConfig: { retries: 0 },
  });
  const errors: unknown[] = [];
  for (const _ of codes) errors.push(await client.auth.test().catch((error: unknown) => error));
  return errors;
}

it("retries auth.test answered with internal_error or service_unavailable, not with a revoked token", async () => {
  const failures = (await authTestErrors("internal_error", "service_unavailable", "token_revoked")).map(
    (error) => slackFailure(error, "bot", "auth.test"),
  );
  expect(failures.map((f) => [f.kind, f.retryable])).toEqual([
    ["unreachable", true],
    ["unreachable", true],
    ["rejected", false],
  ]);
});

it("takes a workspace that removed the app's user or was disabled as a refused token, on either path", async () => {
  const errors = await authTestErrors("user_removed_from_team", "team_disabled");
  expect(errors.map((error) => slackFailure(error, "bot", "auth.test").kind)).toEqual([
    "rejected",
    "rejected",
  ]);
  expect(errors.map((error) => socketModeFailure(error).kind)).toEqual(["rejected", "rejected"]);
});

it("takes a code it does not know as Slack unavailable in Socket Mode only, and a misconfigured app as final on either path", async () => {
  const errors = await authTestErrors(
    "invalid_arguments",
    "not_allowed_token_type",
    "a_code_slack_adds_later",
  );
  const kinds = (failures: ServiceFailure[]) => failures.map((f) => [f.kind, f.retryable]);
  expect(kinds(errors.map((error) => slackFailure(error, "bot", "auth.test")))).toEqual([
    ["misconfigured", false],
    ["misconfigured", false],
    ["misconfigured", false],
  ]);
  expect(kinds(errors.map((error) => socketModeFailure(error)))).toEqual([
    ["misconfigured", false],
    ["misconfigured", false],
    ["unreachable", true],
  ]);
});
