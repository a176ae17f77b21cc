import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedBuild } from '../../bin/build.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { BIN, REPO, runCli, type ServerProcess, spawnServer } from '../helpers/process.js';

/** The CLI on the embedded store, as a new user runs it, and against an external database. */
describe('kairos CLI', () => {
  describe('on the embedded store', () => {
    const dataDir = join(REPO, '.test-data', `cli-${process.pid}`);
    const env = { KAIROS_DATA_DIR: dataDir };
    let server: ServerProcess | null = null;
    beforeAll(() => rmSync(dataDir, { recursive: true, force: true }));
    afterAll(async () => {
      await server?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('creates an account with the server stopped, then serve accepts its key', {
      timeout: 90_000,
    }, async () => {
      // No store yet: only --create makes one outside `serve`.
      const out = await runCli(['accounts', 'create', '--name', 'Acme', '--create', '--json'], env);
      expect(out.code, out.stderr).toBe(0);
      expect(existsSync(join(dataDir, 'pg'))).toBe(true);
      const lines = out.stdout.trim().split('\n');
      expect(lines.length).toBe(1);
      const created = JSON.parse(lines[0]!);
      expect(Object.keys(created)).toEqual(['account', 'api_key']);
      expect(created.account).toMatchObject({ name: 'Acme', plan: 'free' });
      expect(created.api_key.key).toMatch(/^svc_sk_live_/);

      server = await spawnServer(env);
      const me = await fetch(`${server.url}/v1/me`, {
        headers: { authorization: `Bearer ${created.api_key.key}` },
      });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { account: { name: string } }).account.name).toBe('Acme');

      // with the server running, the CLI uses the same embedded PostgreSQL server
      const second = await runCli(
        ['accounts', 'create', '--name', 'Beta', '--plan', 'premium', '--json'],
        env,
      );
      expect(second.code, second.stderr).toBe(0);
      const beta = JSON.parse(second.stdout);
      expect(beta.account.plan).toBe('premium');
      const me2 = await fetch(`${server.url}/v1/me`, {
        headers: { authorization: `Bearer ${beta.api_key.key}` },
      });
      expect(me2.headers.get('x-ratelimit-limit')).toBe('1000');

      // The operator raises the free account's limit, and lists the accounts.
      const refused = await runCli(
        ['accounts', 'update', created.account.id, '--rate-limit', '50000', '--json'],
        env,
      );
      expect(refused.code).not.toBe(0);
      expect(JSON.parse(refused.stdout).error.message).toMatch(/enterprise/);
      const updated = await runCli(
        ['accounts', 'update', created.account.id, '--plan', 'enterprise', '--rate-limit', '50000', '--json'],
        env,
      );
      expect(updated.code, updated.stderr).toBe(0);
      expect(JSON.parse(updated.stdout).account).toMatchObject({
        plan: 'enterprise',
        rate_limit_per_hour: 50000,
      });
      const listed = await runCli(['accounts', 'list', '--json'], env);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stderr).toBe(`kairos: store: embedded PostgreSQL, data directory ${dataDir}\n`);
      expect(JSON.parse(listed.stdout).accounts.map((a: { name: string }) => a.name)).toEqual([
        'Acme',
        'Beta',
      ]);
    });
  });

  describe('without a store', () => {
    const missing = join(REPO, '.test-data', `cli-missing-${process.pid}`);

    // Each case starts the CLI (a second or more each on a busy 2-core machine).
    it('refuses to create a new data directory, saying how to, with exit code 2', {
      timeout: 90_000,
    }, async () => {
      rmSync(missing, { recursive: true, force: true });
      for (const args of [['accounts', 'list'], ['mail', 'list'], ['migrate']]) {
        const out = await runCli(args, { KAIROS_DATA_DIR: missing });
        expect(out.code, args.join(' ')).toBe(2);
        expect(out.stderr).toContain(`no data directory at ${missing}`);
        expect(out.stderr).toMatch(/kairos serve.*npm start.*--create/);
      }
      const asJson = await runCli(['accounts', 'list', '--json'], { KAIROS_DATA_DIR: missing });
      expect(asJson.code).toBe(2);
      expect(JSON.parse(asJson.stdout).error.message).toContain('--create');
      expect(existsSync(missing)).toBe(false);
    });

    it("prints --version and each command's own --help without touching a store", {
      timeout: 120_000,
    }, async () => {
      const env = { KAIROS_DATA_DIR: missing };
      const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
      // The installed command's loader, running the sources through tsx as a fresh clone does.
      const v = await runCli(['--version'], { ...env, KAIROS_FROM_SOURCE: 'true' }, undefined, BIN);
      expect(v.code).toBe(0);
      expect(v.stdout).toBe(`${pkg.version}\n`);
      expect(JSON.parse((await runCli(['--version', '--json'], env)).stdout)).toEqual({
        version: pkg.version,
      });

      const help = await runCli(['users', 'create', '--help'], env);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('kairos users create --account ID --email E [--name N] --password-stdin');
      expect(help.stdout).not.toContain('keys revoke');
      const users = await runCli(['users', '--help'], env);
      expect(users.stdout).toContain('kairos users list [--account ID]');
      expect(users.stdout).toContain('kairos users reset-password EMAIL --password-stdin');
      const mail = await runCli(['mail', '--help'], env);
      expect(mail.stdout).toContain('kairos mail list');
      expect(mail.stdout).toContain('kairos mail show ID');
      expect(mail.stdout).not.toContain('accounts create');
      const global = await runCli(['--help'], env);
      expect(global.stdout).toContain('Usage: kairos <command>');
      expect(global.stdout).toContain('keys revoke');
      // A usage error shows the usage of its own command.
      const bad = await runCli(['keys', 'create'], env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--account is required');
      expect(bad.stderr).toContain('kairos keys create --account ID');
      expect(bad.stderr).not.toContain('accounts list');
      expect(existsSync(missing)).toBe(false);
    });
  });

  describe('on an external database', () => {
    let t: TestApp;
    let env: Record<string, string>;
    beforeAll(async () => {
      t = await startTestApp();
      env = { DATABASE_URL: t.database.url, KAIROS_MASTER_KEY: t.masterKey };
    });
    afterAll(() => t.close());

    it('creates users, keys, lists and revokes them, each printing one JSON object', {
      timeout: 120_000,
    }, async () => {
      const acc = JSON.parse(
        (
          await runCli(
            ['accounts', 'create', '--name', 'Cli', '--plan', 'enterprise', '--rate-limit', '5000', '--json'],
            env,
          )
        ).stdout,
      );
      expect(acc.account.rate_limit_per_hour).toBe(5000);
      // Without --json, it says how to make someone who can sign in to the console.
      const human = await runCli(['accounts', 'create', '--name', 'Human'], env);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toMatch(/kairos users create --account [0-9a-f-]{36} --email E --password-stdin/);
      const user = await runCli(
        [
          'users',
          'create',
          '--account',
          acc.account.id,
          '--email',
          'cli@example.com',
          '--name',
          'Cleo Li',
          '--password-stdin',
          '--json',
        ],
        env,
        'a long enough password\n',
      );
      expect(user.code, user.stderr).toBe(0);
      expect(JSON.parse(user.stdout).user).toMatchObject({ email: 'cli@example.com', name: 'Cleo Li' });
      const login = await t.call('POST', '/v1/sessions', {
        body: { email: 'cli@example.com', password: 'a long enough password' },
      });
      expect(login.status).toBe(201);
      const session = ((await login.json()) as { token: string }).token;

      // The account's users, as the operator sees them (no password hash).
      const users = await runCli(['users', 'list', '--account', acc.account.id, '--json'], env);
      expect(users.code, users.stderr).toBe(0);
      const listed = JSON.parse(users.stdout).users as { email: string; account_id: string }[];
      expect(listed.map((u) => u.email)).toEqual(['cli@example.com']);
      expect(users.stdout).not.toMatch(/password|\$argon|\$scrypt/);
      const everyone = await runCli(['users', 'list'], env);
      expect(everyone.code, everyone.stderr).toBe(0);
      expect(everyone.stdout).toContain(`cli@example.com`);
      expect(everyone.stdout).toContain(acc.account.id);

      // A forgotten password: the operator sets a new one; the old one and its sessions stop working.
      const reset = await runCli(
        ['users', 'reset-password', 'CLI@example.com', '--password-stdin', '--json'],
        env,
        'another long password\n',
      );
      expect(reset.code, reset.stderr).toBe(0);
      expect(JSON.parse(reset.stdout)).toMatchObject({
        user: { email: 'cli@example.com' },
        sessions_revoked: 1,
      });
      const old = await t.call('POST', '/v1/sessions', {
        body: { email: 'cli@example.com', password: 'a long enough password' },
      });
      expect(old.status).toBe(401);
      const fresh = await t.call('POST', '/v1/sessions', {
        body: { email: 'cli@example.com', password: 'another long password' },
      });
      expect(fresh.status).toBe(201);
      expect((await t.call('GET', '/v1/me', { token: session })).status).toBe(401);
      const short = await runCli(
        ['users', 'reset-password', 'cli@example.com', '--password-stdin', '--json'],
        env,
        'short\n',
      );
      expect(short.code).toBe(1);
      expect(JSON.parse(short.stdout).error.errors).toHaveProperty('password');
      const nobody = await runCli(
        ['users', 'reset-password', 'nobody@example.com', '--password-stdin', '--json'],
        env,
        'another long password\n',
      );
      expect(nobody.code).toBe(1);
      expect(JSON.parse(nobody.stdout).error.message).toContain('kairos users list');

      const pk = await runCli(
        [
          'keys',
          'create',
          '--account',
          acc.account.id,
          '--type',
          'publishable',
          '--allowed-domain',
          'shop.example',
          '--json',
        ],
        env,
      );
      const pkKey = JSON.parse(pk.stdout).api_key;
      expect(pkKey.key).toMatch(/^svc_pk_live_/);
      expect(pkKey.allowed_domains).toEqual(['shop.example']);

      const list = JSON.parse(
        (await runCli(['keys', 'list', '--account', acc.account.id, '--json'], env)).stdout,
      );
      expect(list.api_keys.length).toBe(2);
      expect(JSON.stringify(list)).not.toMatch(/svc_[sp]k_live_[A-Za-z0-9_-]{20,}/);

      const revoked = await runCli(['keys', 'revoke', pkKey.id, '--json'], env);
      expect(JSON.parse(revoked.stdout).api_key.status).toBe('revoked');
      expect((await t.call('GET', '/v1/public/links/x', { token: pkKey.key })).status).toBe(401);
    });

    it('lists the mails kept without SMTP and shows one with its links', { timeout: 120_000 }, async () => {
      const acc = await t.account({ name: 'Mailer' });
      const invited = await t.call('POST', '/v1/network/invitations', {
        token: acc.key,
        body: { invitee_email: 'sam@globex.example', relationship_type: 'partner' },
      });
      expect(invited.status).toBe(201);

      const list = await runCli(['mail', 'list', '--json'], env);
      expect(list.code, list.stderr).toBe(0);
      const url = new URL(t.database.url);
      expect(list.stderr).toBe(
        `kairos: store: external PostgreSQL at ${url.hostname}:${url.port || '5432'}${url.pathname}\n`,
      );
      if (url.password) expect(list.stderr).not.toContain(url.password);
      const { mails } = JSON.parse(list.stdout) as {
        mails: { id: string; to: string; subject: string; status: string; created_at: string }[];
      };
      const mail = mails.find((m) => m.to === 'sam@globex.example');
      expect(mail).toMatchObject({ id: expect.stringMatching(/^mail_/), subject: expect.any(String) });
      expect(Number.isNaN(Date.parse(mail!.created_at))).toBe(false);

      const human = await runCli(['mail', 'list', '--limit', '1'], env);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout.trim().split('\n')).toHaveLength(1);
      expect(human.stdout).toContain(mail!.id);

      const shown = await runCli(['mail', 'show', mail!.id, '--json'], env);
      expect(shown.code, shown.stderr).toBe(0);
      const detail = JSON.parse(shown.stdout).mail as { text: string; links: string[]; to: string };
      expect(detail.to).toBe('sam@globex.example');
      expect(detail.links.some((l) => l.startsWith(`${t.url}/invitations/`))).toBe(true);
      const text = await runCli(['mail', 'show', mail!.id], env);
      expect(text.stdout).toContain(detail.text);
      expect(text.stdout).toContain(detail.links[0]);

      const none = await runCli(['mail', 'show', 'mail_nope', '--json'], env);
      expect(none.code).toBe(1);
      expect(JSON.parse(none.stdout).error.message).toContain('kairos mail list');
    });

    it('reports usage errors with exit code 2 and bad input as one JSON error object', {
      timeout: 120_000,
    }, async () => {
      const usage = await runCli(['accounts', 'create', '--json'], env);
      expect(usage.code).toBe(2);
      expect(JSON.parse(usage.stdout).error.message).toContain('--name');
      const bad = await runCli(['keys', 'list', '--account', 'nope', '--json'], env);
      expect(bad.code).not.toBe(0);
      expect(JSON.parse(bad.stdout)).toHaveProperty('error');
      const unknown = await runCli(['frobnicate'], env);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('Usage: kairos');
    });
  });

  describe('the server log', () => {
    it("is for people with KAIROS_LOG_FORMAT=pretty (a terminal's default): text lines, the setup link boxed", {
      timeout: 90_000,
    }, async () => {
      const database = await createTestDatabase(); // no account yet: the server logs a setup link
      const server = await spawnServer(
        {
          DATABASE_URL: database.url,
          KAIROS_MASTER_KEY: randomBytes(32).toString('base64'),
          KAIROS_LOG_FORMAT: 'pretty',
          LOG_LEVEL: 'info',
        },
        60_000,
      );
      try {
        const out = server.output();
        const link = /│ (http:\/\/\S+\/console\/setup\?token=[\w-]+) │/.exec(out)?.[1];
        expect(link, out).toBeDefined();
        expect(out).toContain(`┌${'─'.repeat(link!.length + 2)}┐\n│ ${link} │\n└`);
        expect(out).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}No account yet: open http/m);
        expect(out).not.toMatch(/^\{"level"/m);
      } finally {
        await server.stop();
        await database.drop();
      }
    });
  });

  describe("bin/kairos.js's build of the sources", () => {
    const root = join(REPO, '.test-data', `cached-build-${process.pid}`);
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it('is made once, used while the sources are unchanged, and made again when one changes', async () => {
      rmSync(root, { recursive: true, force: true });
      mkdirSync(join(root, 'src', 'web'), { recursive: true });
      writeFileSync(join(root, 'src', 'main.ts'), "export const v: string = 'one';\n");
      writeFileSync(join(root, 'src', 'web', 'page.ts'), 'export {};\n'); // browser code: not built
      const entry = await cachedBuild(root);
      expect(entry).toBe(join(root, '.kairos-build', 'main.js'));
      expect(readFileSync(entry!, 'utf8')).toContain('"one"');
      expect(existsSync(join(root, '.kairos-build', 'web'))).toBe(false);
      const made = statSync(entry!).mtimeMs;
      expect(await cachedBuild(root)).toBe(entry);
      expect(statSync(entry!).mtimeMs).toBe(made);
      writeFileSync(join(root, 'src', 'main.ts'), "export const v: string = 'two!';\n");
      expect(await cachedBuild(root)).toBe(entry);
      expect(readFileSync(entry!, 'utf8')).toContain('"two!"');
      writeFileSync(join(root, 'src', 'other.ts'), 'export const w = 1;\n');
      mkdirSync(join(root, '.kairos-build-999999999')); // a build whose process was killed
      await cachedBuild(root);
      expect(existsSync(join(root, '.kairos-build-999999999'))).toBe(false);
      expect(existsSync(join(root, '.kairos-build', 'other.js'))).toBe(true);
    });
  });
});
