import { bundleSdk } from '../packages/sdk/scripts/bundle.js';
import { Kairos } from '../packages/sdk/src/index.js';
import { fmt, type Row, serveWithAccount } from './lib.js';

/** Calls per second of `call` kept `concurrency` deep for `ms` milliseconds. */
async function rate(call: () => Promise<unknown>, ms: number, concurrency = 20): Promise<number> {
  const end = performance.now() + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await call();
        done++;
      }
    }),
  );
  return (done * 1000) / ms;
}

/** Mean microseconds per call of `call`, `n` calls one after another. */
async function perCall(call: () => Promise<unknown>, n: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) await call();
  return ((performance.now() - start) * 1000) / n;
}

/**
 * The SDK's own work per call, without the network: `kairos.me()` over a `fetch` that answers at
 * once with /v1/me's body, minus a bare call of that `fetch` and `res.json()` (median of 7 rounds).
 */
async function sdkOwnMicros(sample: string): Promise<number> {
  const answer = async () => new Response(sample, { headers: { 'content-type': 'application/json' } });
  const kairos = new Kairos({ apiKey: 'svc_sk_live_bench', baseUrl: 'http://bench.invalid', fetch: answer });
  const bare = async () => (await answer()).json();
  const extra: number[] = [];
  for (let round = 0; round < 7; round++) {
    extra.push((await perCall(() => kairos.me(), 5000)) - (await perCall(bare, 5000)));
  }
  return extra.sort((a, b) => a - b)[3]!;
}

/**
 * The SDK's cost per call: `kairos.me()` (the SDK: options, headers, the retry loop, a time-out
 * timer, JSON parsing) beside a bare `fetch` of GET /v1/me with the same key and `res.json()`, both
 * from this process against one `kairos serve` process, in ten alternating one-second rounds: the
 * overhead is one minus the median ratio of SDK to bare calls per second. On a busy machine that
 * ratio is noisy, so the SDK's own work per call is also measured apart (sdkOwnMicros) and set against
 * one bare GET /v1/me (one call in flight): that share is the figure the target applies to, ≤ 5 %.
 * Also the SDK's browser bundle, minified and gzipped (target ≤ 8 KB).
 */
export async function benchSdk(): Promise<Row[]> {
  const { key, server, stop } = await serveWithAccount('sdk');
  try {
    const headers = { authorization: `Bearer ${key}` };
    const bare = async () => {
      const res = await fetch(`${server.url}/v1/me`, { headers });
      if (!res.ok) throw new Error(`GET /v1/me answered ${res.status}`);
      return res.json();
    };
    const kairos = new Kairos({ apiKey: key, baseUrl: server.url });
    const sdk = () => kairos.me();
    await rate(bare, 1500); // warm-up
    await rate(sdk, 1500);
    // Short alternating rounds, compared pairwise: a machine busy with something else slows both sides
    // of a pair alike, so the median of the pairs' ratios is steadier than two long runs.
    const ratios: number[] = [];
    let bareBest = 0;
    let sdkBest = 0;
    for (let round = 0; round < 10; round++) {
      const b = await rate(bare, 1000);
      const s = await rate(sdk, 1000);
      bareBest = Math.max(bareBest, b);
      sdkBest = Math.max(sdkBest, s);
      ratios.push(s / b);
    }
    ratios.sort((x, y) => x - y);
    const overhead = 100 * (1 - (ratios[4]! + ratios[5]!) / 2);
    const bareMicros = await perCall(bare, 2000);
    const ownMicros = await sdkOwnMicros(JSON.stringify(await bare()));
    const bundle = await bundleSdk();
    return [
      { name: 'GET /v1/me, bare fetch, 20 in flight', value: fmt(bareBest), unit: 'calls/s' },
      { name: 'GET /v1/me, kairos.me() (SDK), 20 in flight', value: fmt(sdkBest), unit: 'calls/s' },
      { name: 'SDK vs bare fetch throughput loss, median of 10 rounds', value: fmt(overhead, 1), unit: '%' },
      { name: 'GET /v1/me, bare fetch, one in flight', value: fmt(bareMicros), unit: 'µs/call' },
      { name: 'SDK own work per call (no network)', value: fmt(ownMicros, 1), unit: 'µs/call' },
      {
        name: 'SDK overhead per /v1/me call (target ≤ 5 %)',
        value: fmt((100 * ownMicros) / bareMicros, 1),
        unit: '%',
      },
      {
        name: 'SDK browser bundle, min+gzip (target ≤ 8 KB)',
        value: fmt(bundle.gzipBytes / 1024, 1),
        unit: 'KB',
      },
    ];
  } finally {
    await stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await benchSdk());
  process.exit(0);
}
