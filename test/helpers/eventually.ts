// Waiting for something another task does (a log line written after the response, a
// request reaching an engine) without a fixed sleep that a slower machine outruns.

/** Polls `check` every 20 ms until it is true, or fails after `timeoutMs`. */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
