/**
 * An object standing for one a test file starts in its beforeAll (an app, a browser): the file's tests
 * write `t.call(…)` as with an object of their own, and a read before it has started fails saying so.
 */
export function startedLater<T extends object>(current: () => T | undefined, what = 'the app'): T {
  return new Proxy({} as T, {
    get(_, key) {
      const it = current();
      if (!it) throw new Error(`${what} starts in beforeAll`);
      return Reflect.get(it, key);
    },
  });
}
