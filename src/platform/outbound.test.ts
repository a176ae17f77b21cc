import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../test/helpers/promises.js';
import { type Receiver, startReceiver } from '../../test/helpers/receiver.js';
import {
  checkUrl,
  closeOutboundDispatchers,
  createOutboundDispatcher,
  isForbiddenAddress,
  OutboundRefused,
  OutboundTimeout,
  outboundFetch,
} from './outbound.js';

const STRICT = { allowPrivateNetwork: false };
const DEV = { allowPrivateNetwork: true };

describe('isForbiddenAddress', () => {
  const forbidden: Record<string, string[]> = {
    'unspecified / this network': ['0.0.0.0', '0.1.2.3', '::', '0:0:0:0:0:0:0:0'],
    'private 10/8': ['10.0.0.1', '10.255.255.255'],
    'private 172.16/12': ['172.16.0.1', '172.31.255.254'],
    'private 192.168/16': ['192.168.0.1', '192.168.255.255'],
    loopback: ['127.0.0.1', '127.255.255.254', '::1', '0:0:0:0:0:0:0:1'],
    'link-local': ['169.254.169.254', '169.254.0.1', 'fe80::1', 'febf::1', 'fe80::1%eth0'],
    CGNAT: ['100.64.0.1', '100.127.255.254'],
    multicast: ['224.0.0.1', '239.255.255.250', 'ff02::1', 'ff0e::1'],
    'broadcast and reserved 240/4': ['255.255.255.255', '240.0.0.1', '250.1.2.3'],
    'documentation and benchmarking': [
      '192.0.2.1',
      '198.51.100.7',
      '203.0.113.9',
      '198.18.0.1',
      '198.19.255.255',
      '2001:db8::1',
      '3fff::1',
      '2001:2::1',
    ],
    'IETF protocol assignments': ['192.0.0.8', '192.0.0.170'],
    'ULA fc00::/7': ['fc00::1', 'fd12:3456:789a::1'],
    'site-local, discard, other non-global IPv6': ['fec0::1', '100::1', '5f00::1', '4000::1', 'e000::1'],
    'IPv4-mapped private': ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe'],
    'IPv4-compatible (deprecated)': ['::127.0.0.1', '::8.8.8.8', '::a00:1'],
    'IPv4-translated private': ['::ffff:0:10.1.2.3'],
    'NAT64 of private': ['64:ff9b::127.0.0.1', '64:ff9b::a00:1', '64:ff9b:1::8.8.8.8'],
    '6to4 of private': ['2002:c0a8:0101::1', '2002:7f00:1::', '2002:a9fe:a9fe::1'],
    Teredo: ['2001:0:4136:e378:8000:63bf:3fff:fdd2'],
    'bracketed literals': ['[::1]', '[fe80::1]'],
    'not an IP at all (fail closed)': ['', 'localhost', 'example.com', '1.2.3', '256.1.1.1', '::g'],
  };
  for (const [kind, ips] of Object.entries(forbidden)) {
    it(`refuses ${kind}`, () => {
      for (const ip of ips) expect(isForbiddenAddress(ip), ip).toBe(true);
    });
  }

  it('allows public unicast (never contacted: pure classification)', () => {
    const allowed = [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '172.15.255.255',
      '172.32.0.1',
      '100.63.255.255',
      '100.128.0.1',
      '192.169.0.1',
      '223.255.255.255',
      '2606:4700:4700::1111',
      '2a00:1450:4001:80b::200e',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::1',
    ];
    for (const ip of allowed) expect(isForbiddenAddress(ip), ip).toBe(false);
  });
});

describe('checkUrl', () => {
  const refused = (url: string, policy = STRICT): string => {
    const r = checkUrl(url, policy);
    if (r.ok) throw new Error(`expected ${url} to be refused`);
    return r.reason;
  };

  it('accepts https with a host name (not resolved here)', () => {
    const r = checkUrl('https://hooks.example.com/kairos?x=1', STRICT);
    expect(r.ok && r.url.hostname).toBe('hooks.example.com');
  });

  it('allows only https unless the private network is allowed', () => {
    expect(refused('http://hooks.example.com/')).toMatch(/scheme http/);
    expect(refused('ftp://hooks.example.com/')).toMatch(/scheme ftp/);
    expect(refused('file:///etc/passwd')).toMatch(/scheme file/);
    expect(refused('gopher://hooks.example.com/', DEV)).toMatch(/scheme gopher/);
    expect(checkUrl('http://hooks.example.com/', DEV).ok).toBe(true);
  });

  it('refuses credentials, garbage and overlong URLs', () => {
    expect(refused('https://user:pw@hooks.example.com/')).toMatch(/credentials/);
    expect(refused('https://user@hooks.example.com/')).toMatch(/credentials/);
    expect(refused('not a url')).toBe('invalid URL');
    expect(refused(`https://hooks.example.com/${'a'.repeat(2100)}`)).toMatch(/longer/);
  });

  it('judges IP-literal hosts immediately, in every spelling the URL parser normalises', () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://127.1/',
      'https://2130706433/',
      'https://0x7f000001/',
      'https://0177.0.0.1/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[0:0:0:0:0:ffff:a9fe:a9fe]/',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.1:8443/',
      'https://[fd00::1]/',
    ]) {
      expect(refused(url), url).toMatch(/not a public address/);
    }
    expect(checkUrl('https://8.8.8.8/', STRICT).ok).toBe(true);
    expect(checkUrl('https://127.0.0.1/', DEV).ok).toBe(true);
    expect(checkUrl('http://[::1]:8080/', DEV).ok).toBe(true);
  });
});

describe('outboundFetch against real loopback servers', () => {
  let receiver: Receiver;
  const extraServers: Server[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterEach(() => {
    receiver.setBehaviour(() => ({ status: 200 }));
  });
  afterAll(async () => {
    await receiver.close();
    for (const s of extraServers) {
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
    await closeOutboundDispatchers();
  });

  async function listen(server: Server): Promise<number> {
    extraServers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return (server.address() as AddressInfo).port;
  }

  const opts = { timeoutMs: 2_000, maxBodyBytes: 1024 };

  it('refuses http://127.0.0.1 when the private network is not allowed, and sends nothing', async () => {
    const before = receiver.received.length;
    const err = await outboundFetch(receiver.url, opts, STRICT).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundRefused);
    const httpsErr = await outboundFetch(`https://127.0.0.1:${receiver.port}/`, opts, STRICT).catch(
      (e: unknown) => e,
    );
    expect(httpsErr).toBeInstanceOf(OutboundRefused);
    expect((httpsErr as OutboundRefused).reason).toMatch(/127\.0\.0\.1 is not a public address/);
    expect(receiver.received.length).toBe(before);
  });

  it('allows http://127.0.0.1 when the private network is allowed', async () => {
    receiver.setBehaviour(() => ({ status: 201, body: 'hello', headers: { 'x-test': 'yes' } }));
    const res = await outboundFetch(
      receiver.url,
      { ...opts, method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } },
      DEV,
    );
    expect(res.status).toBe(201);
    expect(res.body.toString()).toBe('hello');
    expect(res.headers['x-test']).toBe('yes');
    expect(res.truncated).toBe(false);
    expect(res.durationMs).toBeGreaterThanOrEqual(0);
    expect(receiver.received.at(-1)?.body).toBe('{"a":1}');
    expect(receiver.received.at(-1)?.method).toBe('POST');
  });

  it('refuses a host name resolving to loopback (localhost) at connect time', async () => {
    const before = receiver.received.length;
    // https passes checkUrl (a name, not a literal); the dispatcher's lookup then refuses.
    const err = await outboundFetch(`https://localhost:${receiver.port}/`, opts, STRICT).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OutboundRefused);
    expect((err as OutboundRefused).reason).toMatch(/^localhost resolves to non-public address/);

    // Directly through the dispatcher (no checkUrl at all), over plain http.
    const agent = createOutboundDispatcher(STRICT);
    try {
      const direct = await request(`http://localhost:${receiver.port}/`, { dispatcher: agent }).catch(
        (e: unknown) => e,
      );
      expect(direct).toBeInstanceOf(OutboundRefused);
      // IP literals are judged by the connector too (net.connect skips lookup for them).
      const literal = await request(`http://127.0.0.1:${receiver.port}/`, { dispatcher: agent }).catch(
        (e: unknown) => e,
      );
      expect(literal).toBeInstanceOf(OutboundRefused);
    } finally {
      await agent.close();
    }
    expect(receiver.received.length).toBe(before);
  });

  it('checks every resolved address at connect time (DNS rebinding, mixed answers)', async () => {
    let lookups = 0;
    // First answer mixes a public and a private address: refused before any connection.
    const agent = createOutboundDispatcher(STRICT, {
      resolve: async () => {
        lookups++;
        return [
          { address: '203.0.113.10', family: 4 },
          { address: '127.0.0.1', family: 4 },
        ];
      },
    });
    try {
      const err = await request(`http://rebind.test:${receiver.port}/`, { dispatcher: agent }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OutboundRefused);
      expect((err as OutboundRefused).reason).toMatch(/rebind\.test resolves to non-public address/);
      expect(lookups).toBe(1);
    } finally {
      await agent.close();
    }
  });

  it('connects to the address its own lookup resolved (allowed when the private network is)', async () => {
    const seen: string[] = [];
    const agent = createOutboundDispatcher(DEV, {
      resolve: async (host) => {
        seen.push(host);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    try {
      const res = await outboundFetch(
        `http://kairos-test.invalid:${receiver.port}/x`,
        { ...opts, dispatcher: agent },
        DEV,
      );
      expect(res.status).toBe(200);
      expect(seen).toEqual(['kairos-test.invalid']);
      expect(receiver.received.at(-1)?.headers.host).toBe(`kairos-test.invalid:${receiver.port}`);
    } finally {
      await agent.close();
    }
  });

  it('does not follow redirects', async () => {
    receiver.setBehaviour(() => ({ status: 302, headers: { location: '/elsewhere' } }));
    const before = receiver.received.length;
    const res = await outboundFetch(receiver.url, opts, DEV);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/elsewhere');
    expect(receiver.received.length).toBe(before + 1);
  });

  it('times out while waiting for the headers', async () => {
    receiver.setBehaviour(() => ({ status: 200, delayMs: 3_000 }));
    const t0 = performance.now();
    const err = await outboundFetch(receiver.url, { ...opts, timeoutMs: 200 }, DEV).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundTimeout);
    expect(performance.now() - t0).toBeLessThan(1_500);
  });

  it('times out on a body that stalls after the headers (the limit is overall)', async () => {
    const port = await listen(
      createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
        // never ends
      }),
    );
    const t0 = performance.now();
    const err = await outboundFetch(`http://127.0.0.1:${port}/`, { ...opts, timeoutMs: 300 }, DEV).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OutboundTimeout);
    expect(performance.now() - t0).toBeLessThan(1_500);
  });

  it('truncates a 10 MiB body to the limit quickly and stops reading', async () => {
    const big = Buffer.alloc(10 * 1024 * 1024, 0x61);
    let closed = false;
    const port = await listen(
      createServer((_req, res) => {
        res.on('close', () => {
          closed = true;
        });
        res.writeHead(200, { 'content-length': String(big.length) });
        res.end(big);
      }),
    );
    const t0 = performance.now();
    const res = await outboundFetch(
      `http://127.0.0.1:${port}/`,
      { timeoutMs: 5_000, maxBodyBytes: 64 * 1024 },
      DEV,
    );
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(64 * 1024);
    expect(res.truncated).toBe(true);
    expect(performance.now() - t0).toBeLessThan(1_000);
    await expect.poll(() => closed, { timeout: 2_000 }).toBe(true);
  });

  it('stops reading an endless body', async () => {
    let written = 0;
    let cut = false;
    const port = await listen(
      createServer((_req, res) => {
        res.on('close', () => {
          cut = true;
        });
        res.writeHead(200);
        const chunk = Buffer.alloc(16 * 1024, 0x62);
        const pump = () => {
          while (!res.destroyed && res.write(chunk)) written += chunk.length;
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
      }),
    );
    const res = await outboundFetch(
      `http://127.0.0.1:${port}/`,
      { timeoutMs: 5_000, maxBodyBytes: 1000 },
      DEV,
    );
    expect(res.body.length).toBe(1000);
    expect(res.truncated).toBe(true);
    // The server sees the connection closed: it wrote all it ever will.
    await waitUntil('the server to see the connection cut', () => cut);
    expect(written).toBeLessThan(16 * 1024 * 1024);
  });

  it('reports an exact-size body as not truncated', async () => {
    receiver.setBehaviour(() => ({ status: 200, body: 'x'.repeat(1024) }));
    const res = await outboundFetch(receiver.url, opts, DEV);
    expect(res.body.length).toBe(1024);
    expect(res.truncated).toBe(false);
  });

  it('passes connection errors through', async () => {
    const port = await listen(createServer());
    await new Promise<void>((resolve) => extraServers.pop()!.close(() => resolve()));
    const err = await outboundFetch(`http://127.0.0.1:${port}/`, opts, DEV).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(OutboundRefused);
    expect(err).not.toBeInstanceOf(OutboundTimeout);
    expect(String((err as Error).message)).toMatch(/ECONNREFUSED/);
  });
});
