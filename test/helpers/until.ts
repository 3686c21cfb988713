export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `done` every 20 ms until it holds; throws naming `what` once `ms` have passed. */
export async function until(done: () => boolean | Promise<boolean>, what = 'condition', ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached in time`);
    await sleep(20);
  }
}

/** The most of `times` (epoch ms) within any half-open second [t, t + 1000): sliding windows, one starting at every time. */
export function busiestSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}
