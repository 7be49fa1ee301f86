import DataLoader from 'dataloader';
import type { RequestContext } from './context';

/**
 * A DataLoader that lives for one request: every call in the same tick is batched into one
 * query, and repeated keys are served from its cache. REST presenters and GraphQL field
 * resolvers share them, so both surfaces issue the same statements.
 */
export function loader<K, V>(
  ctx: RequestContext,
  name: string,
  batch: (keys: readonly K[]) => Promise<Array<V | Error>>,
): DataLoader<K, V> {
  let l = ctx.loaders.get(name) as DataLoader<K, V> | undefined;
  if (!l) {
    l = new DataLoader<K, V>(batch, { maxBatchSize: 1000 });
    ctx.loaders.set(name, l);
  }
  return l;
}

/**
 * Forgets everything the request's loaders have read. Services call it after each write: one
 * GraphQL document may read a post, change it and read it again (mutation fields run in order),
 * and the second read must not be answered from what the first one cached.
 */
export function clearLoaders(ctx: RequestContext): void {
  ctx.loaders.clear();
}

/** Groups rows by a key, preserving the order the keys were asked in. */
export function groupBy<K, V>(keys: readonly K[], rows: V[], keyOf: (row: V) => K): V[][] {
  const map = new Map<K, V[]>(keys.map((k) => [k, []]));
  for (const row of rows) map.get(keyOf(row))?.push(row);
  return keys.map((k) => map.get(k)!);
}
