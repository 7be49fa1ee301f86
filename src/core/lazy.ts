/**
 * A module loaded on its first use instead of at start, given as the `require` call that loads
 * it: what only some requests need (a password hash, a token, a WebSocket) then takes no memory
 * in a process that never serves one, and costs the first such request a few milliseconds.
 */
export function onFirstUse<T>(load: () => T): () => T {
  let module: { loaded: T } | undefined;
  return () => (module ??= { loaded: load() }).loaded;
}
