/**
 * Every ```ts block of README.md and packages/sdk/README.md runs, in order, against a fresh server
 * (packages/sdk/test/docs.test.ts only type-checks them). Each block is a program of its own, run as
 * a reader runs it (`node --import tsx`), with '@kairos/sdk' read from the SDK's sources and the
 * server's address for `http://127.0.0.1:8080`. What the shell walk-throughs set up before a block
 * (accounts, a signed-in user, calendar feeds, the invitation's token from its mail) the test sets up
 * and passes in the environment variables the block reads; the fragments (a webhook receiver, a
 * signature check) are run with a real delivery of the server's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Kairos } from '../../packages/sdk/src/index.js';
import { freePort } from '../../src/db/embedded.js';
import { createTestDatabase } from '../helpers/db.js';
import { serveCalendar, vcalendar } from '../helpers/ics.js';
import { REPO, runCli, spawnServer } from '../helpers/process.js';
import { startReceiver } from '../helpers/receiver.js';
import { weekdaySlots } from '../helpers/slots.js';
import { orFalse, waitUntil } from '../helpers/promises.js';

const dir = join(REPO, '.test-data', `readme-ts-${process.pid}`);
const SDK_ENTRY = join(REPO, 'packages', 'sdk', 'src', 'index.ts');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Block {
  doc: string;
  line: number;
  code: string;
}

/** The ```ts blocks of a document, in order. */
function tsBlocks(doc: string): Block[] {
  const lines = readFileSync(join(REPO, doc), 'utf8').split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```ts') continue;
    const end = lines.indexOf('```', i + 1);
    out.push({ doc, line: i + 1, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return out;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript file as a reader does; `stdout()` is what it has printed so far. */
function start(
  file: string,
  env: Record<string, string>,
): { child: ChildProcess; done: Promise<Run>; stdout: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => (stdout += c));
  child.stderr!.on('data', (c) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
  return { child, done, stdout: () => stdout };
}

describe('the README TypeScript blocks', () => {
  it('every one runs, in order, against a fresh server', { timeout: 240_000 }, async () => {
    const blocks = [...tsBlocks('README.md'), ...tsBlocks('packages/sdk/README.md')];
    expect(blocks.length).toBeGreaterThanOrEqual(20);
    mkdirSync(dir, { recursive: true });
    const database = await createTestDatabase();
    const serverEnv = {
      DATABASE_URL: database.url,
      KAIROS_MASTER_KEY: randomBytes(32).toString('base64'),
      KAIROS_ALLOW_PRIVATE_NETWORK: 'true',
    };
    const server = await spawnServer(serverEnv);
    const feed = await serveCalendar(vcalendar('\r\n', 'X-WR-CALNAME:Work'));
    const receiver = await startReceiver();
    const cli = async (args: string[], stdin?: string) => {
      const out = await runCli([...args, '--json'], serverEnv, stdin);
      expect(out.code, out.stderr).toBe(0);
      return JSON.parse(out.stdout);
    };
    const client = (apiKey?: string) => new Kairos({ apiKey, baseUrl: server.url });
    const slots = weekdaySlots();
    const env: Record<string, string> = {};
    const done = new Set<string>();
    let availability: Block | undefined;
    try {
      // First steps: the account Acme and its key.
      const acme = await cli(['accounts', 'create', '--name', 'Acme', '--plan', 'premium']);
      Object.assign(env, {
        KEY: acme.api_key.key,
        ACME_KEY: acme.api_key.key,
        KAIROS_API_KEY: acme.api_key.key,
        ACME_ACCOUNT_ID: acme.account.id,
      });
      const kairos = client(env.KEY);
      // A real delivery, for the receiver fragments.
      const hook = await kairos.webhooks.create({ url: receiver.url, events: ['booking.created'] });
      const customer = { customer_email: 'ada@example.com', customer_name: 'Ada Lovelace' };
      await kairos.bookings.create({ ...customer, start_time: slots.next().value! });
      const [delivery] = await receiver.waitFor(1);
      const deliveryEnv = {
        DELIVERY: JSON.stringify({ body: delivery!.body, headers: delivery!.headers }),
        WEBHOOK_SECRET: hook.secret!,
      };

      /** Globex, its host, and Sam (its user), each with a calendar feed: the network's shell block. */
      const network = async () => {
        const globex = await cli(['accounts', 'create', '--name', 'Globex', '--plan', 'premium']);
        await cli(
          [
            'users',
            'create',
            '--account',
            globex.account.id,
            '--email',
            'sam@globex.example',
            '--password-stdin',
          ],
          'correct horse battery staple\n',
        );
        const { session } = await client().sessions.create({
          email: 'sam@globex.example',
          password: 'correct horse battery staple',
        });
        const sam = client(session.token);
        const globexKey = client(globex.api_key.key);
        const { host } = await globexKey.hosts.create({ display_name: 'Dr. Lee', timezone: 'Europe/London' });
        await sam.calendars.addIcsFeed({ url: feed.url });
        await kairos.calendars.addIcsFeed({ url: feed.url });
        await globexKey.calendars.addIcsFeed(
          { url: feed.url },
          { query: { principal_id: host.principal_id } },
        );
        Object.assign(env, {
          GLOBEX_KEY: globex.api_key.key,
          GLOBEX_HOST: host.principal_id,
          SAM_SESSION: session.token,
          SAM: (await sam.me()).principal_id,
        });
      };

      const failure = (b: Block, out: Run) =>
        `${b.doc} block at line ${b.line} exited ${out.code}:\n${b.code}\n--- stdout:\n${out.stdout}\n--- stderr:\n${out.stderr.slice(-4000)}`;
      const run = async (b: Block, i: number, extra: Record<string, string> = {}, main?: string) => {
        const file = join(dir, `${i}.mts`);
        writeFileSync(
          file,
          `${b.code
            .replaceAll("'@kairos/sdk'", JSON.stringify(SDK_ENTRY))
            .replaceAll('http://127.0.0.1:8080', server.url)
            .replaceAll('https://kairos.example.com', server.url)}\nexport {};\n`,
        );
        let entry = file;
        if (main) {
          entry = join(dir, `${i}-main.mts`);
          writeFileSync(entry, `import * as block from './${i}.mts';\n${main}\n`);
        }
        const out = await start(entry, { ...env, ...extra }).done;
        expect(out.code, failure(b, out)).toBe(0);
        return out.stdout;
      };

      for (const [i, b] of blocks.entries()) {
        const { code } = b;
        if (code.includes('export function verifyKairosSignature')) {
          // The fragment as a receiver calls it, on the delivery's raw body and X-Webhook-Signature.
          const out = await run(
            b,
            i,
            deliveryEnv,
            [
              'const d = JSON.parse(process.env.DELIVERY!);',
              "const check = (body: string) => block.verifyKairosSignature(Buffer.from(body), d.headers['x-webhook-signature'], process.env.WEBHOOK_SECRET!);",
              "console.log(check(d.body), check(d.body + ' '));",
            ].join('\n'),
          );
          expect(out.trim()).toBe('true false');
          done.add('signature');
        } else if (code.includes('export async function onDelivery')) {
          const out = await run(
            b,
            i,
            deliveryEnv,
            [
              'const d = JSON.parse(process.env.DELIVERY!);',
              'await block.onDelivery(Buffer.from(d.body), d.headers);',
            ].join('\n'),
          );
          expect(out).toMatch(/^booked /);
          done.add('onDelivery');
        } else if (code.includes('createServer(')) {
          // The receiver listens; a webhook to it, then a booking: the block verifies and logs it.
          const port = await freePort();
          const { secret } = await kairos.webhooks.create({
            url: `http://127.0.0.1:${port}/`,
            events: ['booking.created'],
          });
          const file = join(dir, `${i}.mts`);
          writeFileSync(file, code.replaceAll("'@kairos/sdk'", JSON.stringify(SDK_ENTRY)));
          const receiving = start(file, { ...env, PORT: String(port), WEBHOOK_SECRET: secret! });
          try {
            await waitUntil(
              'the receiver to listen',
              orFalse(async () => (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST' })).status > 0),
              20_000,
              50,
            );
            const { booking } = await kairos.bookings.create({
              ...customer,
              start_time: slots.next().value!,
            });
            await waitUntil(
              'the receiver to print the booking',
              () => receiving.stdout().includes(`booked ${booking.id}`),
              20_000,
              50,
            );
          } finally {
            receiving.child.kill();
          }
          done.add('receiver');
        } else {
          if (code.includes('network.invitations.create')) await network();
          if (code.includes('process.env.INVITATION')) {
            const { mails } = await cli(['mail', 'list']);
            const mail = (mails as { id: string; to: string }[]).find((m) => m.to === 'sam@globex.example');
            const shown = await cli(['mail', 'show', mail!.id]);
            env.INVITATION = (shown.mail.links[0] as string).split('/').pop()!;
          }
          const extra: Record<string, string> = {};
          if (code.includes('svc_pk_live_…')) {
            const { api_key } = await kairos.apiKeys.create({ name: 'Website', key_type: 'publishable' });
            b.code = code.replaceAll('svc_pk_live_…', api_key.key!);
          }
          if (code.includes('CALENDAR_FEED_URL')) extra.CALENDAR_FEED_URL = feed.url;
          const out = await run(b, i, extra);
          if (code.includes("display_name: 'Dr. Ann'")) {
            const { hosts } = await kairos.hosts.list();
            env.HOST = hosts!.find((h) => h.display_name === 'Dr. Ann')!.principal_id;
          }
          if (code.includes('visitor.public.book(')) {
            // The booking's manage link, for the next block.
            env.TOKEN = /\/b\/([\w-]+)/.exec(out)![1]!;
            done.add('public booking');
          }
          if (code.includes('availability.slots({\n    principal_id: HOST')) {
            // Dr. Ann has no calendar: the block says so; with one, it lists the week's free times.
            expect(out).toContain('no calendar connected');
            availability = b;
          }
          if (code.includes('SlotUnavailableError) {')) {
            expect(out.trim()).toBe('max_days_ahead');
            done.add('refused');
          }
          if (code.includes('proposals.respond(proposal.id')) expect(out.trim()).toBe('accepted');
        }
      }
      // The availability block again, for a host with a calendar (Globex's, from the network setup).
      expect(availability).toBeDefined();
      const out = await run(availability!, blocks.length, { KEY: env.GLOBEX_KEY!, HOST: env.GLOBEX_HOST! });
      expect(out).toMatch(/^[1-9]\d* free times; the first: \d{4}-/);
      expect([...done].sort()).toEqual(['onDelivery', 'public booking', 'receiver', 'refused', 'signature']);
    } finally {
      await receiver.close();
      await feed.close();
      await server.stop();
      await database.drop();
    }
  });
});
