/**
 * The outbound HTTP guard. Every request Kairos makes to a URL a user gave it (webhook deliveries,
 * CalDAV and ICS fetches) goes through this module, never through a bare `fetch`.
 *
 * Two layers:
 *  1. `checkUrl` — a static check when the URL is accepted and again before each request: scheme,
 *     no credentials, and IP-literal hosts (in any spelling the WHATWG parser normalises, such as
 *     `2130706433` or `[::ffff:7f00:1]`).
 *  2. The dispatcher from `createOutboundDispatcher` — resolves host names itself at connect time and
 *     refuses the connection if ANY resolved address is forbidden. The check is made on the very
 *     addresses the socket connects to, so a name that resolves to a public address when the
 *     subscription is saved and to 127.0.0.1 later (DNS rebinding) is refused when it matters.
 *
 * `allowPrivateNetwork` (development and tests only) allows `http:` and every address.
 */
import { type LookupAddress, lookup as dnsLookup } from 'node:dns';
import { isIP, isIPv4, isIPv6, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, buildConnector, type Dispatcher, request } from 'undici';

export interface OutboundPolicy {
  /** Allow `http:` URLs and private, loopback and other non-public addresses. Never in production. */
  allowPrivateNetwork: boolean;
}

/** The request was refused by the guard before any byte was sent to the forbidden address. */
export class OutboundRefused extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(`outbound request refused: ${reason}`);
    this.name = 'OutboundRefused';
    this.reason = reason;
  }
}

/** The request did not complete (connect, headers and body) within its overall time limit. */
export class OutboundTimeout extends Error {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`outbound request timed out after ${timeoutMs} ms`);
    this.name = 'OutboundTimeout';
    this.timeoutMs = timeoutMs;
  }
}

// ---------------------------------------------------------------------------------------------------
// Address classification

/** IPv4 ranges that are not public unicast: [network, prefix length]. */
const FORBIDDEN_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation TEST-NET-2
  ['203.0.113.0', 24], // documentation TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes broadcast 255.255.255.255
];

/** IPv6 ranges inside 2000::/3 (global unicast) that are still not public: [network, prefix]. */
const FORBIDDEN_V6_IN_GLOBAL: ReadonlyArray<readonly [string, number]> = [
  ['2001::', 32], // Teredo (embeds an obfuscated IPv4 address)
  ['2001:2::', 48], // benchmarking
  ['2001:10::', 28], // ORCHID (deprecated)
  ['2001:20::', 28], // ORCHIDv2
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
];

function parseV4(ip: string): number | null {
  if (!isIPv4(ip)) return null;
  const parts = ip.split('.').map(Number);
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

function v4InRange(addr: number, network: string, prefix: number): boolean {
  const net = parseV4(network)!;
  if (prefix === 0) return true;
  const mask = (~0 << (32 - prefix)) >>> 0;
  return (addr & mask) >>> 0 === (net & mask) >>> 0;
}

function isForbiddenV4(addr: number): boolean {
  return FORBIDDEN_V4.some(([network, prefix]) => v4InRange(addr, network, prefix));
}

/** Parses an IPv6 address (no zone, no brackets) into a 128-bit integer. */
function parseV6(ip: string): bigint | null {
  if (!isIPv6(ip)) return null;
  const halves = ip.split('::');
  if (halves.length > 2) return null;
  const toGroups = (part: string | undefined): number[] | null => {
    if (!part) return [];
    const groups: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const v4 = parseV4(piece);
        if (v4 === null) return null;
        groups.push(v4 >>> 16, v4 & 0xffff);
      } else {
        groups.push(Number.parseInt(piece, 16));
      }
    }
    return groups;
  };
  const head = toGroups(halves[0]);
  const tail = toGroups(halves[1]);
  if (head === null || tail === null) return null;
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  if (fill < 0) return null;
  const groups = [...head, ...new Array<number>(fill).fill(0), ...tail];
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return null;
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

function v6InRange(addr: bigint, network: string, prefix: number): boolean {
  const net = parseV6(network)!;
  const shift = BigInt(128 - prefix);
  return addr >> shift === net >> shift;
}

function embeddedV4(addr: bigint, shiftBits: number): number {
  return Number((addr >> BigInt(shiftBits)) & 0xffffffffn);
}

function isForbiddenV6(addr: bigint): boolean {
  // ::ffff:a.b.c.d (IPv4-mapped) and ::ffff:0:a.b.c.d (IPv4-translated): judge the IPv4 address.
  if (v6InRange(addr, '::ffff:0:0', 96) || v6InRange(addr, '::ffff:0:0:0', 96)) {
    return isForbiddenV4(embeddedV4(addr, 0));
  }
  // NAT64 well-known prefix 64:ff9b::/96: judge the IPv4 address it translates to.
  if (v6InRange(addr, '64:ff9b::', 96)) return isForbiddenV4(embeddedV4(addr, 0));
  // 6to4 2002:a.b.c.d::/48: judge the embedded IPv4 address.
  if (v6InRange(addr, '2002::', 16)) return isForbiddenV4(embeddedV4(addr, 80));
  // Everything outside 2000::/3 is special: ::, ::1, IPv4-compatible ::/96, discard 100::/64,
  // local-use NAT64 64:ff9b:1::/48, ULA fc00::/7, link-local fe80::/10, site-local fec0::/10,
  // multicast ff00::/8, SRv6 5f00::/16 and all still unassigned space.
  if (addr >> 125n !== 1n) return true;
  return FORBIDDEN_V6_IN_GLOBAL.some(([network, prefix]) => v6InRange(addr, network, prefix));
}

/**
 * True when `ip` is not a public unicast address and must not be contacted: private, loopback,
 * link-local, CGNAT, multicast, unspecified, broadcast, reserved, documentation, benchmarking,
 * ULA, and IPv6 forms embedding such an IPv4 address (mapped, translated, NAT64, 6to4).
 * Accepts `[...]` brackets and `%zone` suffixes. Anything that is not an IP address is forbidden
 * (fail closed).
 */
export function isForbiddenAddress(ip: string): boolean {
  let s = ip.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  const v4 = parseV4(s);
  if (v4 !== null) return isForbiddenV4(v4);
  const v6 = parseV6(s);
  if (v6 !== null) return isForbiddenV6(v6);
  return true;
}

// ---------------------------------------------------------------------------------------------------
// Static URL check

/** Longest URL accepted for an outbound target. */
export const MAX_OUTBOUND_URL_LENGTH = 2048;

/**
 * Static check of an outbound target URL. Host names are NOT resolved here (they are checked at
 * connect time by the dispatcher); IP-literal hosts are judged immediately.
 */
export function checkUrl(
  url: string,
  policy: OutboundPolicy,
): { ok: true; url: URL } | { ok: false; reason: string } {
  if (url.length > MAX_OUTBOUND_URL_LENGTH) {
    return { ok: false, reason: `URL longer than ${MAX_OUTBOUND_URL_LENGTH} characters` };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'invalid URL' };
  }
  const schemeOk =
    parsed.protocol === 'https:' || (policy.allowPrivateNetwork && parsed.protocol === 'http:');
  if (!schemeOk) {
    return { ok: false, reason: `scheme ${parsed.protocol.replace(/:$/, '')} not allowed (https only)` };
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return { ok: false, reason: 'credentials in URL not allowed' };
  }
  if (parsed.hostname === '') return { ok: false, reason: 'URL has no host' };
  const host = stripBrackets(parsed.hostname);
  if (isIP(host) !== 0 && !policy.allowPrivateNetwork && isForbiddenAddress(host)) {
    return { ok: false, reason: `address ${host} is not a public address` };
  }
  return { ok: true, url: parsed };
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

// ---------------------------------------------------------------------------------------------------
// Connect-time guard

/** Resolves a host name to all its addresses. Replaceable in tests (no real DNS needed). */
export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

const systemResolveAll: ResolveAll = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, order: 'verbatim' }, (err, addresses) => {
      if (err) reject(err);
      else resolve(addresses);
    });
  });

export interface OutboundDispatcherOptions {
  /** Name resolution; defaults to the system resolver (`dns.lookup` with `all: true`). */
  resolve?: ResolveAll;
  /** TCP + TLS connect time limit in milliseconds (default 10 000). */
  connectTimeoutMs?: number;
}

function guardedLookup(policy: OutboundPolicy, resolveAll: ResolveAll): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname).then(
      (resolved) => {
        if (!policy.allowPrivateNetwork) {
          const bad = resolved.find((a) => isForbiddenAddress(a.address));
          if (bad) {
            callback(new OutboundRefused(`${hostname} resolves to non-public address ${bad.address}`), '');
            return;
          }
        }
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = family === 0 ? resolved : resolved.filter((a) => a.family === family);
        const first = usable[0];
        if (!first) {
          const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
          err.code = 'ENOTFOUND';
          callback(err, '');
          return;
        }
        if (options.all) callback(null, usable);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

/**
 * An undici Agent that resolves host names itself and refuses to connect when any resolved
 * address (or an IP-literal host) is forbidden, unless `policy.allowPrivateNetwork`. A refusal
 * surfaces as `OutboundRefused` from the request.
 */
export function createOutboundDispatcher(
  policy: OutboundPolicy,
  options: OutboundDispatcherOptions = {},
): Agent {
  const base = buildConnector({
    lookup: guardedLookup(policy, options.resolve ?? systemResolveAll),
    timeout: options.connectTimeoutMs ?? 10_000,
  });
  const connector: buildConnector.connector = (opts, callback) => {
    const host = stripBrackets(opts.hostname);
    // net.connect skips `lookup` for IP literals, so judge them here.
    if (isIP(host) !== 0 && !policy.allowPrivateNetwork && isForbiddenAddress(host)) {
      callback(new OutboundRefused(`address ${host} is not a public address`), null);
      return;
    }
    base(opts, callback);
  };
  return new Agent({ connect: connector });
}

const sharedDispatchers = new Map<boolean, Agent>();

/** The process-wide guarded dispatcher for a policy (connections are pooled per origin). */
export function getOutboundDispatcher(policy: OutboundPolicy): Agent {
  let agent = sharedDispatchers.get(policy.allowPrivateNetwork);
  if (!agent) {
    agent = createOutboundDispatcher(policy);
    sharedDispatchers.set(policy.allowPrivateNetwork, agent);
  }
  return agent;
}

/** Closes the shared dispatchers (on shutdown). */
export async function closeOutboundDispatchers(): Promise<void> {
  const agents = [...sharedDispatchers.values()];
  sharedDispatchers.clear();
  await Promise.all(agents.map((a) => a.close()));
}

// ---------------------------------------------------------------------------------------------------
// The request

export interface OutboundRequestInit {
  /** Default GET. Any token (PROPFIND and REPORT for CalDAV included). */
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Overall limit for connect + headers + body, in milliseconds. */
  timeoutMs: number;
  /** Read at most this many body bytes, then stop reading and close the connection. */
  maxBodyBytes: number;
  /** A dispatcher from `createOutboundDispatcher` (tests); defaults to the shared one for the policy. */
  dispatcher?: Dispatcher;
}

export interface OutboundResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  /** At most `maxBodyBytes` bytes. */
  body: Buffer;
  /** True when the body was longer than `maxBodyBytes` and reading stopped. */
  truncated: boolean;
  /** Whole duration, from the call to the end of the body read, rounded to milliseconds. */
  durationMs: number;
}

/** Returns the OutboundRefused in an error or its `cause` chain, if any. */
export function findOutboundRefused(err: unknown): OutboundRefused | null {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof OutboundRefused) return current;
    current = current.cause;
  }
  return null;
}

/**
 * Makes one request through the guard. Never follows redirects (a 3xx is returned as is).
 * Throws `OutboundRefused`, `OutboundTimeout`, or the network error.
 */
export async function outboundFetch(
  url: string,
  init: OutboundRequestInit,
  policy: OutboundPolicy,
): Promise<OutboundResponse> {
  const started = performance.now();
  const checked = checkUrl(url, policy);
  if (!checked.ok) throw new OutboundRefused(checked.reason);

  // The time-out error is built only when the timer fires: most requests never need its stack.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new OutboundTimeout(init.timeoutMs)), init.timeoutMs);
  let body: Dispatcher.ResponseData['body'] | undefined;
  try {
    const res = await request(checked.url, {
      method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: init.headers,
      body: init.body,
      dispatcher: init.dispatcher ?? getOutboundDispatcher(policy),
      signal: controller.signal,
    });
    body = res.body;
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      const room = init.maxBodyBytes - size;
      if (buf.length > room) {
        if (room > 0) chunks.push(buf.subarray(0, room));
        size += Math.max(room, 0);
        truncated = true;
        break; // leaving the loop destroys the stream; undici then closes the connection
      }
      chunks.push(buf);
      size += buf.length;
    }
    return {
      status: res.statusCode,
      headers: flattenHeaders(res.headers),
      body: Buffer.concat(chunks, size),
      truncated,
      durationMs: Math.round(performance.now() - started),
    };
  } catch (err) {
    if (controller.signal.aborted && controller.signal.reason instanceof OutboundTimeout)
      throw controller.signal.reason;
    throw findOutboundRefused(err) ?? err;
  } finally {
    clearTimeout(timer);
    if (body && !body.destroyed) body.destroy();
  }
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
