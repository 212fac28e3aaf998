/**
 * A promise the test settles by hand, its resolve and reject in hand (Node 20 has no
 * Promise.withResolvers): for work a test holds open to look at what happens meanwhile.
 */

/** A promise with its resolve and reject in hand. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
