import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { directAccessWriter } from './platform/access-log.js';
import { batchedLines, openLog } from './server.js';

/** The server module as the tests' `kairos` processes run it (test/helpers/build.ts). */
const SERVER = pathToFileURL(join(dirname(inject('kairosEntry')), 'server.js')).href;

describe("the server's log", () => {
  it("writes its access lines directly, not through pino's general path", () => {
    const { log, close } = openLog('info', false);
    try {
      expect(directAccessWriter(log)).toBeDefined();
    } finally {
      close();
    }
  });

  it('writes the lines still pending when the process ends on an uncaught error', () => {
    // The error is thrown from a timer of the child's, so it is uncaught in a process already running
    // (not a failed import); nothing in the test waits on that timer.
    const script = `
      import { openLog } from ${JSON.stringify(SERVER)};
      const { log } = openLog('info', false);
      log.info({ step: 1 }, 'before the crash');
      setTimeout(() => { log.info({ step: 2 }, 'just before'); throw new Error('boom'); }, 20);
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.status).toBe(1);
    expect(child.stderr).toContain('boom');
    const lines = child.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.msg)).toEqual(['before the crash', 'just before']);
  });
});

describe('batched log lines', () => {
  it('hand over whole lines, in order, in batches within the limit in bytes', () => {
    const batches: Buffer[] = [];
    const lines = batchedLines((b) => batches.push(b), 64);
    const written: string[] = [];
    for (let i = 0; i < 40; i++) {
      // Some lines with characters of two, three and four bytes: the limit counts bytes, not characters.
      const line = `{"n":${i},"s":"${'é日😀'.repeat(i % 4)}"}\n`;
      written.push(line);
      lines.write(line);
    }
    lines.flush();
    expect(batches.length).toBeGreaterThan(1);
    for (const b of batches) {
      expect(b.length).toBeLessThanOrEqual(64);
      expect(b.toString().endsWith('\n')).toBe(true);
    }
    expect(Buffer.concat(batches).toString()).toBe(written.join(''));
  });

  it('hold lines until the limit is reached or they are flushed', () => {
    const batches: Buffer[] = [];
    const lines = batchedLines((b) => batches.push(b), 4096);
    lines.write('{"msg":"one"}\n');
    lines.write('{"msg":"two"}\n');
    expect(batches).toHaveLength(0);
    lines.flush();
    expect(batches.map(String)).toEqual(['{"msg":"one"}\n{"msg":"two"}\n']);
    lines.flush();
    expect(batches).toHaveLength(1);
  });

  it('send a line longer than the limit alone, after what was pending', () => {
    const batches: Buffer[] = [];
    const lines = batchedLines((b) => batches.push(b), 32);
    const long = `{"msg":"${'x'.repeat(100)}"}\n`;
    lines.write('{"a":1}\n');
    lines.write(long);
    lines.write('{"b":2}\n');
    lines.flush();
    expect(batches.map(String)).toEqual(['{"a":1}\n', long, '{"b":2}\n']);
  });
});
