/**
 * What a model name may look like wherever people name one (the `model` command, the config's
 * model choices): the characters endpoints use in model ids and nothing else, so a name never
 * carries spaces, quotes or markup into a reply or a request.
 */

/** A model name: letters, digits and `. : / @ _ -`, at most 120 characters. */
export const MODEL_NAME = /^[\w.:/@-]{1,120}$/;

/** How the allowed characters are described to people. */
export const MODEL_NAME_CHARACTERS = "letters, digits and . : / @ _ - only";
