/**
 * UserDirectory: Slack user ids → display names, what kind of account each is (a member, a guest,
 * someone of another organisation, or a bot: AccountKind) and whether it is deactivated
 * (users.info), cached with a TTL so a busy thread costs one lookup per person. Slackbot
 * (USLACKBOT) is a bot, though users.info says is_bot false for it. A Slack Connect partner is
 * `external`: users.info calls them `is_stranger`, or names a home team (`team_id`) that is neither
 * the installation's team nor a workspace of its enterprise (`enterprise_user.enterprise_id`, or the
 * enterprise id itself). The installation is known only once the channel has started: until then a
 * person with a stated team is of unknown kind (refused, asked again later). A failed lookup falls back to the handle (or id) and leaves the account
 * kind and deactivated flag unknown (undefined): the access checks refuse such a person (fail
 * closed) rather than take
 * them for a member, and a wake-up check rejects (cannot tell now) rather than say "no". A failure
 * is remembered only FAILURE_TTL_MS (5 s), not the hour a profile is: long enough that the one
 * message's second ask (its access check, then its author) makes no second call to a failing
 * method, short enough that a retry soon after asks Slack again. It is logged at warn once per
 * person per WARN_INTERVAL_MS, at debug otherwise.
 */
import type { Logger } from "pino";
import type { PlatformUser } from "../../core/thread-target.js";
import { LruCache } from "../../core/lru-cache.js";
import type { AccountKind } from "./slack-access.js";
import { describeError, type WebClient } from "./slack-api.js";
import { SLACKBOT_USER_ID } from "./slack-events.js";
import type { Installation } from "./slack-intake.js";

const TTL_MS = 60 * 60 * 1_000;
/**
 * How long a failed lookup stands before the person is looked up again: long enough for one
 * message's two asks, short enough that the person's retry asks Slack afresh.
 */
const FAILURE_TTL_MS = 5 * 1_000;
/** How often a person's failing lookups are logged at warn (at debug in between). */
const WARN_INTERVAL_MS = 10 * 60 * 1_000;

/** What users.info says of an account, as far as its kind goes. */
interface AccountFacts {
  readonly id: string;
  readonly is_bot?: boolean;
  readonly is_restricted?: boolean;
  readonly is_ultra_restricted?: boolean;
  readonly is_stranger?: boolean;
  readonly team_id?: string;
  readonly enterprise_user?: { readonly enterprise_id?: string };
}

interface Entry {
  readonly name: string;
  /** The facts its kind is read from (accountOf), against the installation known at the time. */
  readonly facts: AccountFacts;
  /** The account is deactivated (users.info `deleted`). */
  readonly deactivated: boolean;
  readonly at: number;
}

/** A profile as looked up; `facts` and `deactivated` are undefined when Slack could not say. */
interface Profile {
  readonly name: string;
  readonly facts: AccountFacts | undefined;
  readonly deactivated: boolean | undefined;
}

export class UserDirectory {
  private readonly cache = new LruCache<string, Entry>(10_000);
  private readonly inflight = new Map<string, Promise<Profile>>();
  /** When each person's last lookup failed. */
  private readonly failedAt = new LruCache<string, number>(10_000);
  /** When each person's failing lookup was last logged at warn. */
  private readonly warnedAt = new LruCache<string, number>(10_000);

  /** `home` is the installation people are judged against (undefined before the channel starts). */
  constructor(
    private readonly client: WebClient,
    private readonly logger: Logger,
    private readonly home: () => Installation | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** The person as a PlatformUser; `fallbackName` (e.g. the handle a payload carried) if the lookup fails. */
  async user(id: string, fallbackName?: string): Promise<PlatformUser> {
    return { id, name: (await this.profile(id, fallbackName ?? id)).name };
  }

  /**
   * What kind of account Slack says this is: a member, a guest of the workspace (single- or
   * multi-channel), a person of another organisation or a bot; undefined when Slack could not say
   * (the lookup failed, or the installation is not known yet): treat that as not allowed.
   */
  async account(id: string): Promise<AccountKind | undefined> {
    const { facts } = await this.profile(id, id);
    return facts === undefined ? undefined : accountOf(facts, this.home());
  }

  /**
   * Whether Slack says now that the person's account is deactivated: never from the cache but
   * looked up afresh (shared with a lookup under way, none while a failed one stands), which also
   * renews the cached profile, its account kind included, for checks made long after the person last
   * wrote. Undefined when Slack could not say (the lookup failed): treat that as not allowed.
   */
  async isDeactivatedNow(id: string): Promise<boolean | undefined> {
    return (await this.profile(id, id, 0)).deactivated;
  }

  /**
   * The person's profile: cached for up to `maxAgeMs`, else looked up — one lookup at a time per
   * person, and none while a failed one stands (FAILURE_TTL_MS).
   */
  private async profile(id: string, fallback: string, maxAgeMs = TTL_MS): Promise<Profile> {
    const hit = this.cache.get(id);
    if (hit && this.now() - hit.at < maxAgeMs) return hit;
    const failed = this.failedAt.get(id);
    if (failed !== undefined && this.now() - failed < FAILURE_TTL_MS) return unknown(fallback);
    const pending = this.inflight.get(id);
    if (pending) return pending;
    const lookup = this.lookup(id, fallback).finally(() => this.inflight.delete(id));
    this.inflight.set(id, lookup);
    return lookup;
  }

  private async lookup(id: string, fallback: string): Promise<Profile> {
    try {
      const result = await this.client.users.info({ user: id });
      const user = result.user;
      const name = user?.profile?.display_name || user?.real_name || user?.name || id;
      const entry = {
        name,
        facts: factsOf(id, user),
        deactivated: user?.deleted === true,
        at: this.now(),
      };
      this.cache.set(id, entry);
      this.failedAt.delete(id);
      return entry;
    } catch (error) {
      const now = this.now();
      this.failedAt.set(id, now);
      const warned = this.warnedAt.get(id);
      const message =
        "slack users.info failed: the person's guest and deactivated status is unknown, so checks that need it refuse them until Slack answers";
      if (warned === undefined || now - warned >= WARN_INTERVAL_MS) {
        this.warnedAt.set(id, now);
        this.logger.warn({ err: describeError(error), user: id }, message);
      } else this.logger.debug({ err: describeError(error), user: id }, message);
      return unknown(fallback);
    }
  }
}

/**
 * The kind of account users.info describes: a bot (is_bot, or Slackbot), else someone of another
 * organisation (module comment), else a multi- or single-channel guest (is_restricted /
 * is_ultra_restricted), else a member. Undefined when a stated home team cannot be judged yet
 * (no installation known).
 */
function accountOf(user: AccountFacts, home: Installation | undefined): AccountKind | undefined {
  if (user.is_bot === true || user.id === SLACKBOT_USER_ID) return "bot";
  if (user.is_stranger === true) return "external";
  if (user.team_id !== undefined && user.team_id !== "") {
    if (home === undefined) return undefined;
    const enterprise = home.enterpriseId;
    const ours =
      user.team_id === home.teamId ||
      (enterprise !== undefined &&
        (user.team_id === enterprise || user.enterprise_user?.enterprise_id === enterprise));
    if (!ours) return "external";
  }
  return user.is_restricted === true || user.is_ultra_restricted === true ? "guest" : "member";
}

/** The fields of a users.info answer its kind is read from (a profile holds many more). */
function factsOf(id: string, user: Omit<AccountFacts, "id"> | undefined): AccountFacts {
  return {
    id,
    is_bot: user?.is_bot === true,
    is_restricted: user?.is_restricted === true,
    is_ultra_restricted: user?.is_ultra_restricted === true,
    is_stranger: user?.is_stranger === true,
    ...(user?.team_id === undefined ? {} : { team_id: user.team_id }),
    ...(user?.enterprise_user?.enterprise_id === undefined
      ? {}
      : { enterprise_user: { enterprise_id: user.enterprise_user.enterprise_id } }),
  };
}

/** What a failed lookup stands for: the fallback name; account kind and deactivation unknown. */
function unknown(name: string): Profile {
  return { name, facts: undefined, deactivated: undefined };
}
