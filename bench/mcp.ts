/**
 * MCP benchmark: a `get_available_slots` tool call on `POST /mcp` (current protocol revision, JSON
 * answer) against the same question asked of `GET /v1/availability/slots`, 7 and 30 days of a host
 * whose calendar (an ICS feed of 1,000 busy blocks, read once) is warm. The tool call runs the REST
 * request in-process and shows every time in the host's zone, so the ratio is the price of the MCP
 * layer: JSON-RPC, the inner dispatch, times with offsets, the output-schema check. Target: the tool
 * call's req/s ≥ 70 % of the REST route's. 50 connections; route and tool call take turns. Beside
 * req/s, the server process's CPU per request (Linux /proc) gives the same ratio with less noise
 * from whatever else runs on the machine. First, the size of `tools/list` as the official client reads
 * it: the default listing beside its target (≤ 40 KB) and each toolset alone (docs/mcp.md#toolsets).
 *
 * The request the tool call sends is the one the official MCP client makes (recorded once, then
 * replayed by autocannon). The server runs in a child process (this file again, KAIROS_BENCH_CHILD=1)
 * on its own embedded PostgreSQL. Run alone with `node --import tsx bench/mcp.ts`; BENCH_SECONDS
 * (default 6) is the measured time per target.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { TOOLSETS } from '../src/modules/mcp/toolsets.js';
import {
  busyFeed,
  feedRuntime,
  forkBenchChild,
  type LoadResult,
  load,
  median,
  type Row,
  serveOnTempStore,
} from './lib.js';
import { DAY } from '../src/lib/time.js';

const CHILD_ENV = 'KAIROS_BENCH_CHILD';
const ZONE = 'America/New_York';
const CONNECTIONS = 50;
const ROUNDS = 3;
const TARGET = 0.7;
/** The default `tools/list` answer's target size in bytes (an agent's context holds it whole). */
const LIST_TARGET = 40_000;

interface Ready {
  pid: number;
  url: string;
  token: string;
  host: string;
  from: number;
}

/**
 * The server process's CPU time so far in ms (Linux /proc; null elsewhere): CPU per request suffers
 * less than req/s from other work on the machine (the load generator's included).
 */
function cpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : null;
  } catch {
    return null;
  }
}

/** A load run and the server's CPU µs per request in it. */
async function measured(
  pid: number,
  run: () => Promise<LoadResult>,
): Promise<LoadResult & { us: number | null }> {
  const before = cpuMs(pid);
  const r = await run();
  const after = cpuMs(pid);
  return {
    ...r,
    us: before === null || after === null || r.total === 0 ? null : ((after - before) * 1000) / r.total,
  };
}

async function serveOn(url: string): Promise<void> {
  const { runtime: ctx, close } = await feedRuntime(url);
  const app = ctx.app!;
  let feed: Server | null = null;
  try {
    const { account, api_key } = await ctx.modules.accounts.createAccount({
      name: 'Bench',
      plan: 'enterprise',
      rateLimitPerHour: 1_000_000_000,
    });
    const host = await ctx.modules.principals.createHost(account.id, {
      display_name: 'Bench host',
      timezone: ZONE,
    });
    const from = Math.ceil(Date.now() / DAY) * DAY;
    const ics = busyFeed({ start: from, end: from + 30 * DAY }, 1000);
    feed = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/calendar' }).end(ics);
    });
    await new Promise<void>((resolve) => feed?.listen(0, '127.0.0.1', resolve));
    const connected = await app.inject({
      method: 'POST',
      url: '/v1/calendars/ics',
      headers: { authorization: `Bearer ${api_key.key}` },
      payload: {
        url: `http://127.0.0.1:${(feed.address() as AddressInfo).port}/busy.ics`,
        principal_id: host.principal_id,
      },
    });
    if (connected.statusCode !== 201) throw new Error(`connecting the feed failed: ${connected.body}`);
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const ready: Ready = {
      pid: process.pid,
      url: address,
      token: api_key.key,
      host: host.principal_id,
      from,
    };
    process.send?.(ready);
    await new Promise<void>((resolve) => process.once('message', () => resolve()));
  } finally {
    await close();
    await new Promise((resolve) => (feed ? feed.close(resolve) : resolve(undefined)));
  }
}

/** The HTTP request the official client sends for one tool call (headers and body), recorded. */
async function recordToolCall(
  url: string,
  token: string,
  args: Record<string, unknown>,
): Promise<{ headers: Record<string, string>; body: string; slots: number }> {
  let last: { headers: Record<string, string>; body: string } | undefined;
  const recording: typeof fetch = async (input, init) => {
    if (init?.method === 'POST' && typeof init.body === 'string' && init.body.includes('"tools/call"')) {
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((v, k) => {
        headers[k] = v;
      });
      last = { headers, body: init.body };
    }
    return fetch(input, init);
  };
  const client = new Client(
    { name: 'kairos-bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      fetch: recording,
    }),
  );
  const result = (await client.callTool({ name: 'get_available_slots', arguments: args })) as {
    isError?: boolean;
    structuredContent?: { slots?: unknown[] };
    content: { text?: string }[];
  };
  await client.close();
  if (result.isError || !last) throw new Error(`tool call failed: ${result.content[0]?.text}`);
  return { ...last, slots: result.structuredContent?.slots?.length ?? 0 };
}

/** The bytes of the `tools/list` answer the official client reads from `/mcp` + `query`, and its tools. */
async function listingBytes(
  url: string,
  token: string,
  query: string,
): Promise<{ bytes: number; tools: number }> {
  let bytes = 0;
  const counting: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (typeof init?.body === 'string' && init.body.includes('"tools/list"'))
      bytes = Buffer.byteLength(await res.clone().text());
    return res;
  };
  const client = new Client({ name: 'kairos-bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`/mcp${query}`, url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      fetch: counting,
    }),
  );
  const { tools } = await client.listTools();
  await client.close();
  return { bytes, tools: tools.length };
}

/** The size of `tools/list`: the default listing beside its target, then each toolset alone. */
async function listingRows(url: string, token: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const set of ['', 'all', ...Object.keys(TOOLSETS)]) {
    const { bytes, tools } = await listingBytes(url, token, set ? `?toolsets=${set}` : '');
    rows.push({
      name: `mcp.tools/list ${set ? `toolsets=${set}` : 'default'} (${tools} tools)`,
      value: String(bytes),
      unit: set
        ? `bytes (~${Math.round(bytes / 4)} tokens)`
        : `bytes (target ≤ ${LIST_TARGET}; ~${Math.round(bytes / 4)} tokens)`,
    });
  }
  return rows;
}

export async function benchMcp(): Promise<Row[]> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 6);
  const { ready, stop } = await forkBenchChild<Ready>(import.meta.url, CHILD_ENV);
  try {
    const rows: Row[] = await listingRows(ready.url, ready.token);
    const auth = { authorization: `Bearer ${ready.token}` };
    for (const days of [7, 30]) {
      const from = new Date(ready.from).toISOString();
      const to = new Date(ready.from + days * DAY).toISOString();
      const rest = `${ready.url}/v1/availability/slots?${new URLSearchParams({
        principal_id: ready.host,
        duration_minutes: '30',
        from,
        to,
      })}`;
      const call = await recordToolCall(ready.url, ready.token, {
        principal_id: ready.host,
        duration_minutes: 30,
        from,
        to,
      });
      const runRest = (s: number) => load(rest, { connections: CONNECTIONS, seconds: s, headers: auth });
      const runMcp = (s: number) =>
        load(`${ready.url}/mcp`, {
          connections: CONNECTIONS,
          seconds: s,
          headers: call.headers,
          nextBody: () => call.body,
        });
      await runRest(2);
      await runMcp(2);
      const runs: { rest: LoadResult & { us: number | null }; mcp: LoadResult & { us: number | null } }[] =
        [];
      for (let i = 0; i < ROUNDS; i++) {
        const r = await measured(ready.pid, () => runRest(seconds / ROUNDS));
        const m = await measured(ready.pid, () => runMcp(seconds / ROUNDS));
        for (const [name, x] of [
          ['REST', r],
          ['MCP', m],
        ] as const) {
          if (x.non2xx > 0 || x.errors > 0)
            throw new Error(`${name}: ${x.non2xx} non-2xx, ${x.errors} errors`);
        }
        runs.push({ rest: r, mcp: m });
      }
      const label = `get_available_slots ${days}d (${call.slots} slots)`;
      rows.push(
        {
          name: `mcp.${label} REST req/s`,
          value: median(runs.map((x) => x.rest.rps)).toFixed(0),
          unit: 'req/s',
        },
        {
          name: `mcp.${label} tool call req/s`,
          value: median(runs.map((x) => x.mcp.rps)).toFixed(0),
          unit: 'req/s',
        },
        { name: `mcp.${label} tool call p99`, value: String(median(runs.map((x) => x.mcp.p99))), unit: 'ms' },
        {
          name: `mcp.${label} tool call vs REST`,
          value: (100 * median(runs.map((x) => x.mcp.rps / x.rest.rps))).toFixed(0),
          unit: `% of req/s (target ≥ ${100 * TARGET} %, ${CONNECTIONS} conn)`,
        },
      );
      if (runs.every((x) => x.rest.us !== null && x.mcp.us !== null)) {
        const us = (side: 'rest' | 'mcp') => median(runs.map((x) => x[side].us as number));
        rows.push(
          { name: `mcp.${label} server CPU per REST request`, value: us('rest').toFixed(0), unit: 'µs' },
          { name: `mcp.${label} server CPU per tool call`, value: us('mcp').toFixed(0), unit: 'µs' },
          {
            name: `mcp.${label} tool call vs REST, by server CPU`,
            value: (100 * median(runs.map((x) => (x.rest.us as number) / (x.mcp.us as number)))).toFixed(0),
            unit: `% (REST µs / tool call µs; target ≥ ${100 * TARGET} %)`,
          },
        );
      }
    }
    return rows;
  } finally {
    await stop();
  }
}

if (process.env[CHILD_ENV] === '1') {
  await serveOnTempStore(serveOn);
} else if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.table(await benchMcp());
}
