/**
 * In-process dispatch: one API request made inside another by the same process (the MCP module's
 * tool calls run the REST operation they mirror through Fastify's `inject`). The caller's request
 * was already counted once by the gate (rate limit) and once by the usage hook; the inner request
 * carries this process's dispatch mark so that neither counts it again. Everything else — the
 * credential, access rules, validation, idempotency, problems — applies to it as to any request.
 * The mark is a random value that never leaves the process (inject makes no socket), so a client
 * cannot forge it.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

const HEADER = 'x-kairos-dispatch';
const MARK = randomBytes(24).toString('base64url');
const MARK_BYTES = Buffer.from(MARK);

/** The headers that mark an in-process request as part of the request that made it. */
export function innerDispatchHeaders(): Record<string, string> {
  return { [HEADER]: MARK };
}

/** Whether this request was made in-process by a request already counted. */
export function isInnerDispatch(request: {
  headers: Record<string, string | string[] | undefined>;
}): boolean {
  const v = request.headers[HEADER];
  if (typeof v !== 'string' || v.length !== MARK.length) return false;
  return timingSafeEqual(Buffer.from(v), MARK_BYTES);
}
