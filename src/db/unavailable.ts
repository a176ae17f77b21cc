/**
 * Which store errors mean "the store cannot be reached now" rather than "this request is wrong" or "our
 * code is wrong": the server answers them 503 with Retry-After (docs/api.md, Errors) and the workers
 * retry later. Connection errors come from three places: the operating system (a refused or reset
 * socket), PostgreSQL itself (it is shutting down, starting up, or out of connection slots), and
 * node-postgres (a connection that ended under a query, or a checkout that timed out).
 */

/** PostgreSQL SQLSTATEs of a store that is going away or not yet there. */
const STORE_STATES = new Set([
  '57P01', // admin_shutdown: the server is stopping (smart or fast shutdown) or the backend was terminated
  '57P02', // crash_shutdown: another backend crashed and the server is resetting
  '57P03', // cannot_connect_now: the server is starting up or shutting down
  '53300', // too_many_connections
]);

/** Operating-system errors of a socket to the store. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/** node-postgres's own messages for a connection that is gone or never came. */
const DRIVER_MESSAGES = [
  /^Connection terminated/, // "Connection terminated unexpectedly", "… due to connection timeout"
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^Query read timeout$/,
];

export type Unavailability = 'store-unreachable' | 'pool-exhausted';

/**
 * What kind of unavailability `err` shows, or null when it is some other error. A pool whose every
 * connection stayed busy past the checkout wait is overload (`pool-exhausted`), not an outage.
 */
export function storeUnavailability(err: unknown): Unavailability | null {
  if (!(err instanceof Error)) return null;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (STORE_STATES.has(code) || code.startsWith('08') || SOCKET_CODES.has(code)) return 'store-unreachable';
  }
  if (err.message === 'timeout exceeded when trying to connect') return 'pool-exhausted';
  if (DRIVER_MESSAGES.some((m) => m.test(err.message))) return 'store-unreachable';
  // Node's happy-eyeballs connect reports every address it tried in one AggregateError.
  if (err instanceof AggregateError && err.errors.some((e) => storeUnavailability(e) !== null))
    return 'store-unreachable';
  return null;
}
