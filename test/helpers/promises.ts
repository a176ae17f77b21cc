/** What `p` rejects with; fails the test when it fulfils instead. */
export async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/**
 * Resolves once `ok` holds, asking it again every `everyMs`; fails the test with `what` when it does
 * not hold within `timeoutMs`. For what is observable only by asking (another process, a queue).
 */
export async function waitUntil(
  what: string,
  ok: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  everyMs = 25,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** A check that counts a rejection as "not yet" (a server that is down refuses connections). */
export function orFalse(check: () => Promise<boolean>): () => Promise<boolean> {
  return () => check().catch(() => false);
}
