import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, median, REPO, type Row, spawnListening } from './lib.js';

/** Runs of each command; the figure is their median. */
const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 9);

const BIN = join(REPO, 'bin', 'kairos.js');

/** Milliseconds from spawning `kairos args…` to its exit (which must be 0). */
function timed(args: string[], env: Record<string, string>): Promise<number> {
  const began = performance.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } }, (err, _out, stderr) => {
      if (err) reject(new Error(`kairos ${args.join(' ')}: ${err.message}\n${stderr}`));
      else resolve(performance.now() - began);
    });
  });
}

/**
 * The `kairos` command's start as a person meets it, through bin/kairos.js from the repository:
 * `--version`, `--help`, and `accounts list` and `mail list` against the store of a running
 * `kairos serve` (embedded, in a temporary data directory, found through it as the README's
 * `npm start` then `npm run kairos -- …` do). Each the median of RUNS runs, one after the other, beside
 * its target; and `accounts list` through tsx from the sources (KAIROS_FROM_SOURCE=true), the way every
 * command ran before bin/kairos.js kept a build of its own.
 */
export async function benchCli(): Promise<Row[]> {
  const base = mkdtempSync(join(tmpdir(), 'kairos-bench-cli-'));
  chmodSync(base, 0o755); // the embedded server runs as an unprivileged user when we are root
  const env = { KAIROS_DATA_DIR: join(base, 'data'), KAIROS_WORKERS: 'false' };
  const server = await spawnListening([BIN, 'serve'], { ...env, PORT: '0', LOG_LEVEL: 'info' });
  try {
    await timed(['--version'], env); // builds .kairos-build/ if the sources changed since
    const cases: { args: string[]; targetMs: number; env?: Record<string, string> }[] = [
      { args: ['--version'], targetMs: 1000 },
      { args: ['--help'], targetMs: 1000 },
      { args: ['accounts', 'list'], targetMs: 2000 },
      { args: ['mail', 'list'], targetMs: 2000 },
      { args: ['accounts', 'list'], targetMs: 2000, env: { KAIROS_FROM_SOURCE: 'true' } },
    ];
    const rows: Row[] = [];
    for (const c of cases) {
      const samples: number[] = [];
      for (let i = 0; i < RUNS; i++) samples.push(await timed(c.args, { ...env, ...c.env }));
      const ms = median(samples);
      rows.push({
        name: `kairos ${c.args.join(' ')}${c.env ? ' (tsx, from the sources)' : ''}`,
        value: fmt(ms),
        unit: `ms, median of ${RUNS} (slowest ${fmt(Math.max(...samples))}); target ≤ ${c.targetMs} ms: ${fmt(ms / c.targetMs, 2)} of it`,
      });
    }
    return rows;
  } finally {
    const exited = new Promise((r) => server.child.once('exit', r));
    server.child.kill('SIGTERM');
    await exited;
    rmSync(base, { recursive: true, force: true });
  }
}
