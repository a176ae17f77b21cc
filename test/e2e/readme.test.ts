import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret, signatureHeader } from '../../src/modules/webhooks/signing.js';
import { startStripeEmulator } from '../emulators/stripe.js';
import { createTestDatabase } from '../helpers/db.js';
import { REPO, spawnServer } from '../helpers/process.js';

const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
const dir = join(REPO, '.test-data', `readme-${process.pid}`);

/** What the walk-throughs use besides Node and npm (First steps says so); without it they are skipped. */
const MISSING_TOOLS = [
  ...['curl', 'jq'].filter((c) => spawnSync('sh', ['-c', `command -v ${c}`]).status !== 0),
  ...(spawnSync('date', ['--version'], { encoding: 'utf8' }).stdout?.includes('GNU') ? [] : ['GNU date']),
];
if (MISSING_TOOLS.length > 0) {
  const why = `README walk-throughs need ${MISSING_TOOLS.join(', ')} (apt-get install curl jq coreutils)`;
  // CI installs them (.ci/run): there a missing tool is a failure, not a skip.
  if (process.env.KAIROS_REQUIRE_README_TOOLS === '1') throw new Error(why);
  console.warn(`${why}: skipped`);
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('README', () => {
  it('starts with what Kairos is and then exactly the two commands', () => {
    const blocks = [...readme.matchAll(/```sh\n([^`]*)```/g)].map((m) => m[1]!.trim());
    expect(readme.startsWith('# Kairos\n\nKairos is')).toBe(true);
    expect(blocks.slice(0, 2)).toEqual(['npm ci && npm start', 'npm ci && npm test']);
  });

  it('shows a receiver verification that accepts real signatures and rejects forged ones', async () => {
    const code = /Verifying a delivery[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(code).toBeDefined();
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'receiver.ts');
    writeFileSync(file, code!);
    const { verifyKairosSignature } = (await import(pathToFileURL(file).href)) as {
      verifyKairosSignature: (raw: Buffer, header: string | undefined, secret: string) => boolean;
    };
    const secret = generateWebhookSecret();
    const body = JSON.stringify({
      id: 'evt_1',
      type: 'booking.created',
      created_at: '2026-06-10T14:00:00.000Z',
      data: {},
    });
    const header = signatureHeader(secret, body);
    expect(verifyKairosSignature(Buffer.from(body), header, secret)).toBe(true);
    expect(verifyKairosSignature(Buffer.from(`${body} `), header, secret)).toBe(false);
    expect(verifyKairosSignature(Buffer.from(body), header.slice(1), secret)).toBe(false);
    expect(verifyKairosSignature(Buffer.from(body), undefined, secret)).toBe(false);
    expect(verifyKairosSignature(Buffer.from(body), header, generateWebhookSecret())).toBe(false);
  });

  it.skipIf(MISSING_TOOLS.length > 0)(
    'runs every walk-through as written, in order, against a fresh server',
    {
      timeout: 150_000,
    },
    async () => {
      const blocks = walkThroughs(readme);
      expect(blocks.length).toBeGreaterThan(10);
      const database = await createTestDatabase();
      // Test your integration's payment hold: a key of Stripe's test mode, here the emulator's.
      const stripe = await startStripeEmulator({
        testSecretKey: 'sk_test_readme',
        testWebhookSecret: 'whsec_readme_test',
      });
      const env = {
        DATABASE_URL: database.url,
        KAIROS_MASTER_KEY: randomBytes(32).toString('base64'),
        // What First steps tells the reader to start the server with.
        KAIROS_ALLOW_PRIVATE_NETWORK: 'true',
        STRIPE_TEST_SECRET_KEY: 'sk_test_readme',
        STRIPE_TEST_WEBHOOK_SECRET: 'whsec_readme_test',
        STRIPE_API_URL: stripe.url,
      };
      const server = await spawnServer(env);
      try {
        // The README sets KAIROS to where `npm start` listens; here the server is on a port of its own.
        const setting = 'KAIROS=http://127.0.0.1:8080';
        expect(blocks.filter((b) => b.code.includes(setting)).length).toBe(1);
        const script = [
          'set -eEuo pipefail',
          // Every request must succeed, except where the README prints the status itself (-w).
          'curl() {',
          '  case " $* " in *" -w "*) command curl "$@"; return;; esac',
          '  local out status=0',
          '  out=$(command curl -sS --fail-with-body "$@") || status=$?',
          `  printf '%s\\n' "$out"`,
          `  if [ "$status" -ne 0 ]; then printf 'curl %s\\nfailed (exit %s): %s\\n' "$*" "$status" "$out" >&2; fi`,
          '  return "$status"',
          '}',
          `trap 'echo "::failed in block $BLOCK: $BASH_COMMAND" >&2' ERR`,
          ...blocks.map(
            (b, i) =>
              `BLOCK=${i}\necho "::block ${i}" >&2\n${b.code.replace(setting, `KAIROS=${server.url}`)}`,
          ),
          'echo "::all blocks ran" >&2',
        ].join('\n');
        const out = await runBash(script, { ...env, KAIROS_FROM_SOURCE: 'true' }, 120_000);
        const failed = /::failed in block (\d+)/.exec(out.stderr);
        const block = failed ? blocks[Number(failed[1])] : undefined;
        const where = block
          ? `README block ${failed![1]} (under "${block.heading}", line ${block.line}) failed:\n${block.code}\n`
          : '';
        expect(out.code, `${where}--- stderr (end):\n${out.stderr.slice(-4000)}`).toBe(0);
        expect(out.stderr).toContain('::all blocks ran');
        // The revoked consent's read, whose status the README prints.
        const printed = out.stdout.split('\n');
        expect(printed).toContain('403');
        // Test your integration: the mode, the live key's 404, the hold ended by the test clock.
        expect(printed).toEqual(
          expect.arrayContaining(['test', 'false', '404', 'pending_payment', 'expired']),
        );
        expect(out.stdout).toMatch(/suppressed \(test mode: never sent\)/);
      } finally {
        await server.stop();
        await stripe.close();
        await database.drop();
      }
    },
  );
});

interface Block {
  code: string;
  heading: string;
  line: number;
}

/**
 * The README's ```sh blocks after the first two (how to start and test), in order, except those
 * marked `<!-- readme-test: skip (why) -->` on the line before (they need Stripe, a writable
 * calendar, or a deployment of their own).
 */
function walkThroughs(text: string): Block[] {
  const out: Block[] = [];
  let heading = '';
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('#')) heading = line.replace(/^#+\s*/, '');
    if (line !== '```sh') continue;
    const end = lines.indexOf('```', i + 1);
    const code = lines.slice(i + 1, end).join('\n');
    const skipped = /^<!-- readme-test: skip \(.+\) -->$/.test(lines[i - 1] ?? '');
    out.push({ code: skipped ? '' : code, heading, line: i + 1 });
    i = end;
  }
  return out.slice(2).filter((b) => b.code !== '');
}

/** Runs a bash script in the repository in its own process group (its background jobs end with it). */
function runBash(
  script: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], {
      cwd: REPO,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      stderr += `\n::timed out after ${timeoutMs} ms`;
      killGroup();
    }, timeoutMs);
    // bash has exited: end what it left running (a feed server of a failed block), then read the rest.
    child.on('exit', killGroup);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
