/**
 * The console's platform name: the ThreadTarget.platform of its threads and the prefix of its one
 * person's id ("console:local"). Shared by the channel that registers it, the channel plan that
 * adds it, how text names its person, and the approval rules that treat the console's person,
 * running alone, as the deployment's owner.
 */
export const CONSOLE_PLATFORM = "console";
