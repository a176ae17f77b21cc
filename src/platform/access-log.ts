import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';

/** What the access line of one request says (docs/architecture.md, `onResponse`). */
export interface AccessEntry {
  request_id: string;
  method: string;
  route: string;
  status: number;
  ms: number;
}

/** pino's number for `info`, the access line's level. */
const INFO = 30;

/** The access line's message. */
const MESSAGE = 'request';

// pino keeps a logger's settings under these symbols (`pino.symbols`, its documented integration API).
const S = pino.symbols;
/** Declared by pino 9 but missing from its type declarations. */
const msgPrefixSym = (pino.symbols as unknown as Record<string, symbol>).msgPrefixSym as symbol;

/** The parts of a pino logger the access line reads. */
interface PinoParts {
  [S.lsCacheSym]: Record<number, string>;
  [S.timeSym]: () => string;
  [S.chindingsSym]: string;
  [S.endSym]: string;
  [S.messageKeySym]: string;
  [S.streamSym]: { write(line: string): unknown; [S.needsMetadataGsym]?: boolean };
  [S.asJsonSym]: (obj: object, msg: string, level: number, time: string) => string;
  [S.mixinSym]?: unknown;
  [msgPrefixSym]?: unknown;
  [S.hooksSym]?: { logMethod?: unknown; streamWrite?: unknown };
  [S.formattersSym]?: { log?: unknown };
  [S.serializersSym]?: Record<string, unknown>;
  [S.stringifiersSym]?: object;
  [S.nestedKeySym]?: unknown;
}

/** The keys of the access line, its message's among them (a serializer for any of them changes it). */
const KEYS = ['request_id', 'method', 'route', 'status', 'ms', 'msg'] as const;

/**
 * The access line's writer for `log`. A request's line costs pino ~6 % of `GET /v1/me`'s server CPU
 * (docs/performance.md, "The access line written directly"): most of it is the general path, every
 * value's type checked and escaped, and the line handed through a hook chain. For a plain pino logger
 * the line is composed directly, byte for byte what pino writes: checked once here against pino's own
 * serializer for the same entry. A logger with anything that could change the line (a mixin, hooks,
 * a message prefix, a multistream, a log formatter, serializers of its keys, redaction, a nested
 * key, a level `info` that is not 30) fails the conditions or that check, and gets `log.info` as
 * before.
 */
export function accessLogWriter(log: FastifyBaseLogger): (entry: AccessEntry) => void {
  return directAccessWriter(log) ?? ((entry) => log.info(entry, MESSAGE));
}

/** The direct writer, when `log` is a pino logger whose line for the access entry it writes exactly. */
export function directAccessWriter(log: FastifyBaseLogger): ((entry: AccessEntry) => void) | undefined {
  const p = log as unknown as Partial<PinoParts>;
  const stream = p[S.streamSym];
  const asJson = p[S.asJsonSym];
  const time = p[S.timeSym];
  if (!stream || !asJson || !time || typeof stream.write !== 'function') return undefined;
  if (stream[S.needsMetadataGsym] || p[S.mixinSym] || p[msgPrefixSym] !== undefined) return undefined;
  if (p[S.hooksSym]?.logMethod || p[S.hooksSym]?.streamWrite) return undefined;
  if (p[S.formattersSym]?.log || p[S.nestedKeySym]) return undefined;
  const serializers = p[S.serializersSym] ?? {};
  if (KEYS.some((k) => serializers[k]) || serializers[String(p[S.messageKeySym])]) return undefined;
  const stringifiers = p[S.stringifiersSym] ?? {};
  if (Reflect.ownKeys(stringifiers).length > 0) return undefined; // redaction
  const logger = log as unknown as pino.Logger;
  if (logger.levels?.values?.info !== INFO) return undefined;
  const head = `${p[S.lsCacheSym]?.[INFO]}`;
  const chindings = p[S.chindingsSym] ?? '';
  const tail = `,${JSON.stringify(p[S.messageKeySym])}:${JSON.stringify(MESSAGE)}${p[S.endSym]}`;
  const compose = (e: AccessEntry, t: string) =>
    `${head}${t}${chindings},"request_id":${JSON.stringify(e.request_id)},"method":${JSON.stringify(e.method)},"route":${JSON.stringify(e.route)},"status":${e.status},"ms":${e.ms}${tail}`;
  // The same entry through pino's serializer, with characters that need escaping: identical or not used.
  const sample: AccessEntry = {
    request_id: 'req_"\\\n\u0001é',
    method: 'GET',
    route: '/v1/a/:b',
    status: 200,
    ms: 3,
  };
  const t = time.call(log);
  if (asJson.call(log, { ...sample }, MESSAGE, INFO, t) !== compose(sample, t)) return undefined;
  return (e) => {
    if (logger.levelVal <= INFO) stream.write(compose(e, time.call(log)));
  };
}
