import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..');

/** Runs `npm run soak -- …args` and resolves with its exit code and output. */
function soak(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'bench/soak.ts'), ...args], {
      cwd: REPO,
      env: { ...process.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.once('exit', (code) => resolve({ code, out }));
  });
}

describe('npm run soak', () => {
  it('runs 20 s of mixed load to completion, reports every 10 s and prints its summary with no 5xx', async () => {
    const { code, out } = await soak(['--seconds', '20', '--hosts', '5']);
    expect(out).toMatch(/soak: retention shortened for this run to 1 min/);
    expect(
      out.match(/^\[\s*\d+ s\] rss \d+ MiB · p50 \d+ ms p99 \d+ ms · .* rows .*events=\d+/gm)?.length,
    ).toBeGreaterThanOrEqual(2);
    expect(out).toMatch(/^soak summary$/m);
    expect(out).toMatch(
      /^ {2}RSS {2}\d+ MiB at \d+ s → \d+ MiB at \d+ s: ×[\d.]+ \(target ≤ ×1\.15: (met|MISSED)\)$/m,
    );
    expect(out).toMatch(/^ {2}p99 {2}\d+ ms at \d+ s → \d+ ms at \d+ s/m);
    expect(out).toMatch(/ · 5xx 0 · no answer 0$/m);
    expect(code).toBe(0);
  }, 120_000);
});
