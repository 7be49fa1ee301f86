/** What a condition answers once it holds. */
export type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * How a test waits: for the thing itself, never for a fixed time. `until` asks `condition` again
 * (every `everyMs`, 25 by default) until it answers something truthy and returns that answer;
 * `ms` only bounds a failure, which names what was awaited. A condition that throws is asked
 * again (the thing it probes may not be up yet) and the last error is reported on the deadline.
 */
export async function until<T>(condition: () => T | Promise<T>, label: string, { ms = 20_000, everyMs = 25 } = {}): Promise<Truthy<T>> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const answer = await condition();
      if (answer) return answer as Truthy<T>;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${label}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits for `promise` (an awaited event already in flight) with a deadline that only bounds a failure. */
export async function settled<T>(promise: Promise<T>, label: string, ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${label}`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
