import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { type AccessEntry, accessLogWriter, directAccessWriter } from './access-log.js';

/** A pino logger writing into `lines`, with a fixed time so two lines can be compared byte for byte. */
function logger(lines: string[], options: pino.LoggerOptions = {}) {
  return pino(
    { level: 'info', base: { pid: 4242 }, timestamp: () => ',"time":1700000000000', ...options },
    { write: (line: string) => lines.push(line) },
  );
}

const ENTRIES: AccessEntry[] = [
  { request_id: 'req_01JABCDEFGHJKMNPQRSTVWXYZ0', method: 'GET', route: '/v1/me', status: 200, ms: 3 },
  { request_id: 'req_x', method: 'DELETE', route: '/v1/bookings/:id', status: 404, ms: 0 },
  { request_id: 'req_"quoted"\\', method: 'QUERY', route: 'unmatched', status: 405, ms: 12345 },
  { request_id: 'req_\n\t\u0001', method: 'GET', route: '/v1/é/ü/日本', status: 500, ms: 1 },
];

describe('the access line', () => {
  it("is written byte for byte as pino's own info line for the same entry", () => {
    const direct: string[] = [];
    const general: string[] = [];
    const write = directAccessWriter(logger(direct));
    expect(write).toBeDefined();
    const log = logger(general);
    for (const entry of ENTRIES) {
      write?.(entry);
      log.info(entry, 'request');
    }
    expect(direct).toEqual(general);
    expect(JSON.parse(direct[2]!)).toMatchObject({ level: 30, pid: 4242, msg: 'request', ...ENTRIES[2] });
  });

  it("follows the logger's level as it changes", () => {
    const lines: string[] = [];
    const log = logger(lines, { level: 'warn' });
    const write = accessLogWriter(log);
    write(ENTRIES[0]!);
    expect(lines).toHaveLength(0);
    log.level = 'debug';
    write(ENTRIES[0]!);
    expect(lines).toHaveLength(1);
  });

  it('goes through pino for a logger whose settings change the line', () => {
    const settings: [string, pino.LoggerOptions][] = [
      ['mixin', { mixin: () => ({ region: 'eu' }) }],
      ['redaction', { redact: ['request_id'] }],
      ['a serializer', { serializers: { route: (r: string) => r.toUpperCase() } }],
      ['a log formatter', { formatters: { log: (o: object) => ({ ...o, extra: true }) } }],
      ['a message prefix', { msgPrefix: '[http] ' }],
      [
        'a logMethod hook',
        {
          hooks: {
            logMethod(args, method) {
              method.apply(this, args);
            },
          },
        },
      ],
      ['a nested key', { nestedKey: 'payload' }],
      // Serializers and redaction that change only some values: a sample entry would not show them.
      ['a serializer of some routes', { serializers: { route: (r: string) => (r === '/v1/me' ? 'me' : r) } }],
      ['redaction of one path', { redact: ['route'] }],
      ['custom levels', { customLevels: { info: 35 }, useOnlyCustomLevels: false }],
    ];
    for (const [what, options] of settings) {
      const direct: string[] = [];
      const general: string[] = [];
      const log = logger(general, options);
      expect(directAccessWriter(logger(direct, options)), what).toBeUndefined();
      accessLogWriter(logger(direct, options))(ENTRIES[0]!);
      log.info(ENTRIES[0]!, 'request');
      expect(direct, what).toEqual(general);
    }
  });

  it('writes through pino when the logger feeds a multistream', () => {
    const a: string[] = [];
    const log = pino(
      { level: 'info' },
      pino.multistream([{ stream: { write: (line: string) => a.push(line) } }]),
    );
    expect(directAccessWriter(log)).toBeUndefined();
    accessLogWriter(log)(ENTRIES[0]!);
    expect(JSON.parse(a[0]!)).toMatchObject({ msg: 'request', ...ENTRIES[0] });
  });

  it('writes nothing, and does not fail, for a logger that is not pino', () => {
    const calls: unknown[][] = [];
    const log = {
      info: (...args: unknown[]) => calls.push(args),
    } as unknown as Parameters<typeof accessLogWriter>[0];
    expect(directAccessWriter(log)).toBeUndefined();
    accessLogWriter(log)(ENTRIES[1]!);
    expect(calls).toEqual([[ENTRIES[1], 'request']]);
  });
});
