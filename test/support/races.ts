import type { GqlResponse, RestResponse } from './client';

/**
 * Checking concurrent state changes against a sequential model. Conflicting requests are fired at
 * once, so any order of them is a correct outcome, but only an order: every answer and the final
 * row must come from running the operations one after the other in some order (linearizability;
 * no real-time constraint among requests in flight together). With at most a handful of
 * operations, trying every order is cheap and states the allowed set exactly.
 */

/** How one operation changes the model state, and what it answers from that state. */
export type Model<S> = (state: S) => [answer: string, next: S];

export interface Outcome<S> {
  answers: string[];
  final: S;
}

function* permutations(n: number, prefix: number[] = []): Generator<number[]> {
  if (prefix.length === n) {
    yield prefix;
    return;
  }
  for (let i = 0; i < n; i++) if (!prefix.includes(i)) yield* permutations(n, [...prefix, i]);
}

/** Every outcome some sequential order of `ops` produces from `initial` (answers in `ops`' order). */
export function allowedOutcomes<S>(initial: S, ops: Model<S>[]): Outcome<S>[] {
  const seen = new Map<string, Outcome<S>>();
  for (const order of permutations(ops.length)) {
    const answers: string[] = new Array(ops.length);
    let state = initial;
    for (const i of order) [answers[i], state] = ops[i](state);
    const outcome = { answers, final: state };
    seen.set(JSON.stringify(outcome), outcome);
  }
  return [...seen.values()];
}

/** A round whose observed answers and final state no sequential order explains, for the report; null when explained. */
export function unexplained<S>(round: string, initial: S, ops: Model<S>[], observed: Outcome<S>): string | null {
  const allowed = allowedOutcomes(initial, ops);
  const key = JSON.stringify(observed);
  if (allowed.some((o) => JSON.stringify(o) === key)) return null;
  return `${round}: from ${JSON.stringify(initial)} got ${key}`;
}

/** The answer of a REST call as the models spell it: status and message, or status and what `describe` says of the body. */
export function restAnswer(r: RestResponse, describe?: (body: any) => string): string {
  if (r.status === 200 && describe && !('message' in (r.body ?? {}))) return `200 ${describe(r.body)}`;
  return `${r.status} ${r.body?.message}`;
}

/** The same spelling for a GraphQL call, so one model checks both surfaces (NOT_FOUND reads as 404). */
export function gqlAnswer(r: GqlResponse, field: string, describe?: (data: any) => string): string {
  if (r.errors?.length) {
    const code = r.errors[0].extensions?.code;
    return `${code === 'NOT_FOUND' ? 404 : code} ${r.errors[0].message}`;
  }
  const value = r.data?.[field];
  return `200 ${describe ? describe(value) : value?.message}`;
}

/**
 * Starts every request at once, beginning with a different one each round (requests go out in
 * the order they are started, so the first often wins), and returns the answers in `sends`' order.
 */
export function fireAll<T>(round: number, sends: Array<() => Promise<T>>): Promise<T[]> {
  const n = sends.length;
  const started: Promise<T>[] = new Array(n);
  for (let k = 0; k < n; k++) {
    const i = (round + k) % n;
    started[i] = sends[i]();
  }
  return Promise.all(started);
}
