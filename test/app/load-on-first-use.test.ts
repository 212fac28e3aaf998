import { describe, expect, it } from "vitest";
import { loadOnFirstUse } from "../../src/app/load-on-first-use.js";

describe("loadOnFirstUse", () => {
  it("loads nothing until asked, then once for every caller", async () => {
    let loads = 0;
    const get = loadOnFirstUse(async () => ({ n: ++loads }));
    expect(loads).toBe(0);
    const [a, b] = await Promise.all([get(), get()]);
    expect(loads).toBe(1);
    expect(a).toBe(b);
    expect(await get()).toBe(a);
  });

  it("forgets a failed load, so the next use tries again", async () => {
    let loads = 0;
    const get = loadOnFirstUse(async () => {
      loads += 1;
      if (loads === 1) throw new Error("no module");
      return "loaded";
    });
    await expect(get()).rejects.toThrow("no module");
    expect(await get()).toBe("loaded");
    expect(loads).toBe(2);
  });
});
