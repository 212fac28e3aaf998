/**
 * Dependencies for building the tools in tests that look only at what the tools declare: a
 * key-value space and a messenger that do nothing.
 */
import type { KeyValueSpace } from "../../../src/store/store.js";
import type { Messenger } from "../../../src/tools/messaging/messenger.js";

/** A space that stores nothing. */
export const unusedSpace: KeyValueSpace = {
  get: async () => undefined,
  set: async () => undefined,
  delete: async () => false,
  setIfAbsent: async () => true,
  replaceIf: async () => false,
  deleteIf: async () => false,
};

/** A messenger that reports every send as done. */
export const unusedMessenger: Messenger = {
  sendMessage: async () => ({ ok: true, where: "x" }),
  destinationOf: async () => "x",
  sendFile: async () => ({ ok: true, where: "x" }),
};
