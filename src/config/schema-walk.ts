/**
 * Read-only introspection of the zod config schema, used only to explain errors: which keys are
 * valid at a path, and where else in the schema a misplaced key is valid.
 */
import type { z } from "zod";

interface DefView {
  readonly type: string;
  readonly shape?: Readonly<Record<string, z.ZodType>>;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly element?: z.ZodType;
}

function defOf(schema: z.ZodType): DefView {
  return schema._zod.def as unknown as DefView;
}

/** Strip wrappers (optional, default, prefault, nullable, pipes) down to the structural schema. */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (;;) {
    const def = defOf(current);
    const inner = def.innerType ?? (def.type === "pipe" ? def.in : undefined);
    if (inner === undefined) return current;
    current = inner;
  }
}

/** The schema that validates the value at `path`, or undefined when the path leaves the schema. */
export function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let current: z.ZodType | undefined = unwrap(schema);
  for (const segment of path) {
    if (current === undefined) return undefined;
    const def = defOf(current);
    const next: z.ZodType | undefined =
      def.type === "object"
        ? def.shape?.[String(segment)]
        : def.type === "record"
          ? def.valueType
          : def.type === "array"
            ? def.element
            : undefined;
    current = next === undefined ? undefined : unwrap(next);
  }
  return current;
}

/** The keys an object schema accepts, or [] when the schema is not an object. */
export function keysOf(schema: z.ZodType | undefined): readonly string[] {
  if (schema === undefined) return [];
  const def = defOf(unwrap(schema));
  return def.type === "object" && def.shape !== undefined ? Object.keys(def.shape) : [];
}

/** Every dotted path at which each key name is valid (records and arrays are not entered). */
export function keyIndex(schema: z.ZodType): ReadonlyMap<string, readonly string[]> {
  const index = new Map<string, string[]>();
  const visit = (node: z.ZodType, prefix: string): void => {
    const def = defOf(unwrap(node));
    if (def.type !== "object" || def.shape === undefined) return;
    for (const [key, child] of Object.entries(def.shape)) {
      const path = prefix === "" ? key : `${prefix}.${key}`;
      index.set(key, [...(index.get(key) ?? []), path]);
      visit(child, path);
    }
  };
  visit(schema, "");
  return index;
}
