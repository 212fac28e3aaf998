/**
 * The `{…}` forms search_files refuses in a glob, for both engines. The JS engine reads a glob as
 * ripgrep does (search-glob.ts), save two brace forms ripgrep reads by rules of its own: a `**`
 * inside braces (globset makes it recursive or not by what comes before it in its alternative:
 * `{a,**}/c.ts`, `x{/**,}/y.ts`), and an empty alternative beside others (ripgrep 13 drops it, so
 * `a{,b}.ts` does not match `a.ts`, nor `*{/,}c.ts` `c.ts`). Refused, the two engines cannot list
 * different files for one glob; the glob only narrows a search, and each form has a plain spelling.
 */

/** State of one open `{`: whether its current alternative is still empty, and whether it had a `,`. */
interface OpenBrace {
  empty: boolean;
  split: boolean;
}

/** Why `glob`'s braces are refused (see the header), or undefined when they are not. */
export function braceProblem(glob: string): string | undefined {
  const chars = Array.from(glob);
  const open: OpenBrace[] = [];
  let i = 0;
  while (i < chars.length) {
    const char = chars[i] as string;
    const top = open.at(-1);
    let next = i + 1;
    if (char === "\\") {
      next += 1;
    } else if (char === "[") {
      // A class: `!` or `^` may open it, and a `]` right after the opening is one of the set.
      if (chars[next] === "!" || chars[next] === "^") next += 1;
      if (chars[next] === "]") next += 1;
      while (next < chars.length && chars[next] !== "]") next += 1;
      next += 1;
    } else if (char === "*" && top !== undefined && chars[next] === "*") {
      return "a ** inside {…} is not supported (ripgrep's meaning there is subtle): write it outside, e.g. {a,b}/** or **/{a,b}";
    } else if (char === "{") {
      if (top) top.empty = false;
      open.push({ empty: true, split: false });
      i = next;
      continue;
    } else if (top && (char === "," || char === "}")) {
      if (top.empty && (char === "," || top.split))
        return "an empty alternative inside {…} is not supported (ripgrep drops it, so a{,b}.ts does not match a.ts): write each alternative in full, e.g. {a,ab}.ts for a{,b}.ts";
      if (char === "}") open.pop();
      else Object.assign(top, { empty: true, split: true });
      i = next;
      continue;
    }
    if (top) top.empty = false;
    i = next;
  }
  return undefined;
}
