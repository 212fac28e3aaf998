/**
 * The `{…}` forms search_files refuses in a glob, for both engines. The JS engine reads a glob as
 * ripgrep does (search-glob.ts), save three brace forms ripgrep reads by rules of its own: a `**`
 * inside braces (globset makes it recursive or not by what comes before it in its alternative:
 * `{a,**}/c.ts`, `x{/**,}/y.ts`), an empty alternative beside others (ripgrep 13 drops it, so
 * `a{,b}.ts` does not match `a.ts`, nor `*{/,}c.ts` `c.ts`), and braces inside braces (ripgrep
 * refuses `{a,{b,c}}.ts`: "nested alternate groups are not allowed", where the JS engine would
 * search). Refused, the two engines cannot list different files for one glob; the glob only
 * narrows a search, and each form has a plain spelling. search_files checks a glob once, before
 * either engine reads it.
 */

/** State of the open `{`: whether its current alternative is still empty, and whether it had a `,`. */
interface OpenBrace {
  empty: boolean;
  split: boolean;
}

/** Why `glob`'s braces are refused (see the header), or undefined when they are not. */
export function braceProblem(glob: string): string | undefined {
  const chars = Array.from(glob);
  // Braces never nest (see the header): at most one is open.
  let open: OpenBrace | undefined;
  let i = 0;
  while (i < chars.length) {
    const char = chars[i] as string;
    let next = i + 1;
    if (char === "\\") {
      next += 1;
    } else if (char === "[") {
      // A class: `!` or `^` may open it, and a `]` right after the opening is one of the set.
      if (chars[next] === "!" || chars[next] === "^") next += 1;
      if (chars[next] === "]") next += 1;
      while (next < chars.length && chars[next] !== "]") next += 1;
      next += 1;
    } else if (char === "*" && open !== undefined && chars[next] === "*") {
      return "a ** inside {…} is not supported (ripgrep's meaning there is subtle): write it outside, e.g. {a,b}/** or **/{a,b}";
    } else if (char === "{") {
      if (open !== undefined)
        return "a {…} inside {…} is not supported (ripgrep refuses nested braces): write the alternatives in one list, e.g. {a,b,c} for {a,{b,c}}";
      open = { empty: true, split: false };
      i = next;
      continue;
    } else if (open !== undefined && (char === "," || char === "}")) {
      if (open.empty && (char === "," || open.split))
        return "an empty alternative inside {…} is not supported (ripgrep drops it, so a{,b}.ts does not match a.ts): write each alternative in full, e.g. {a,ab}.ts for a{,b}.ts";
      open = char === "}" ? undefined : { empty: true, split: true };
      i = next;
      continue;
    }
    if (open !== undefined) open.empty = false;
    i = next;
  }
  return undefined;
}
