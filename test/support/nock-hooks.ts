/**
 * nock for tests that stand in for a platform's Web API: each test starts with no interceptors and
 * no network, and must have used every interceptor it set up by its end.
 */
import nock from "nock";
import { afterEach, beforeEach, expect } from "vitest";

/** Register the hooks: a clean nock without network before each test, no pending interceptor after it. */
export function useNock(): void {
  beforeEach(() => {
    nock.cleanAll();
    nock.disableNetConnect();
  });
  afterEach(() => {
    expect(nock.pendingMocks()).toEqual([]);
    nock.cleanAll();
    nock.enableNetConnect();
  });
}
