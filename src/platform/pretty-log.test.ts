import { describe, expect, it } from 'vitest';
import { prettyLine } from './pretty-log.js';

const at = Date.UTC(2026, 11, 1, 9, 30, 5, 123);

describe('the log for people', () => {
  it('writes time, level and message, then the other fields as key=value; pid and host left out', () => {
    const line = JSON.stringify({
      level: 30,
      time: at,
      pid: 7,
      msg: 'Kairos is listening',
      url: 'http://x:1',
      n: 2,
    });
    expect(prettyLine(`${line}\n`)).toBe('09:30:05.123 INFO  Kairos is listening  url=http://x:1 n=2\n');
  });

  it('writes an access line as its request, and an error with its stack indented below', () => {
    const access = {
      level: 30,
      time: at,
      pid: 7,
      request_id: 'req_1',
      method: 'GET',
      route: '/v1/me',
      status: 200,
      ms: 3,
      msg: 'request',
    };
    expect(prettyLine(JSON.stringify(access))).toBe(
      '09:30:05.123 INFO  GET /v1/me 200 3 ms  request_id=req_1\n',
    );
    const failed = {
      level: 50,
      time: at,
      msg: 'usage flush failed',
      err: { message: 'boom', stack: 'Error: boom\n    at x' },
    };
    expect(prettyLine(JSON.stringify(failed))).toBe(
      '09:30:05.123 ERROR usage flush failed\n    Error: boom\n        at x\n',
    );
  });

  it('puts the setup link alone in a box under its message', () => {
    const link = 'http://127.0.0.1:8080/console/setup?token=abc';
    const out = prettyLine(
      JSON.stringify({ level: 30, time: at, setup_link: link, msg: `No account yet: open ${link}` }),
    );
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toBe(`09:30:05.123 INFO  No account yet: open ${link}`);
    expect(lines.slice(1)).toEqual([
      `┌${'─'.repeat(link.length + 2)}┐`,
      `│ ${link} │`,
      `└${'─'.repeat(link.length + 2)}┘`,
    ]);
  });

  it('passes a line that is not JSON through unchanged', () => {
    expect(prettyLine('kairos: store: embedded\n')).toBe('kairos: store: embedded\n');
  });
});
