/**
 * Postgres backend: @keyv/postgres with one adapter (one pool, one table) shared by every
 * namespace; keys are `<namespace>:<key>`. `setIfAbsent` is atomic within one process only.
 * @keyv/postgres keeps one module-wide pool per URL, so one process should open one Postgres store.
 */
import { KeyvPostgres } from "@keyv/postgres";
import { STORE_NAMESPACES, type StoreNamespace } from "../store.js";
import { type Backend, type ErrorSink, namespacedKeyv } from "./backend.js";

/** Connect to Postgres (the adapter creates its table) and check it answers; throws a clear error when not. */
export async function openPostgresBackend(
  url: string,
  description: string,
  onError: ErrorSink,
): Promise<Backend> {
  const adapter = new KeyvPostgres({ uri: url });
  adapter.setMaxListeners(STORE_NAMESPACES.length + 4);
  adapter.on("error", onError);
  const ping = async (): Promise<void> => {
    await adapter.query("SELECT 1");
  };
  try {
    await ping();
  } catch (error) {
    await adapter.disconnect().catch(() => undefined);
    throw new Error(`cannot reach the Postgres store at ${description}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const spaces = new Map(
    STORE_NAMESPACES.map((ns) => [ns, namespacedKeyv(adapter, ns, true, onError)] as const),
  );
  return {
    keyv: (namespace: StoreNamespace) => spaces.get(namespace)!,
    ping,
    close: async () => {
      await adapter.disconnect();
    },
  };
}
