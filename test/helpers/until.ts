export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `done` every 20 ms until it holds; throws naming `what` once `ms` have passed. */
export async function until(done: () => boolean | Promise<boolean>, what = 'condition', ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached in time`);
    await sleep(20);
  }
}
