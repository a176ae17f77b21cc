import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { bridgeApiKey, type Config, ConfigError, loadConfig, MAX_PROCESSES } from './config.js';
import type { Plan } from './modules/api-keys/service.js';
import { AppError } from './platform/errors.js';
import { isUuid } from './platform/ids.js';
import type { CliRuntime } from './cli-runtime.js';

/** Each command: its synopsis and what it does (the global help lists them in this order). */
const COMMANDS: Record<string, [synopsis: string, description: string]> = {
  serve: [
    'serve [--processes N]',
    'run the API server (PORT, HOST, DATABASE_URL, …); creates the embedded data directory if needed;\n' +
      `      --processes N (KAIROS_PROCESSES, default 1, at most ${MAX_PROCESSES}): N processes share the port`,
  ],
  migrate: ['migrate [--create]', 'apply database migrations and exit'],
  'accounts create': [
    'accounts create --name N [--plan free|premium|enterprise] [--rate-limit N]',
    'create an account and its first secret key',
  ],
  'accounts list': ['accounts list', 'every account with its plan and hourly limit'],
  'accounts update': [
    'accounts update ID [--plan free|premium|enterprise] [--rate-limit N|default]',
    "change an account's plan or its own limit (enterprise)",
  ],
  'users create': [
    'users create --account ID --email E [--name N] --password-stdin',
    'create a user who can sign in (password read from stdin)',
  ],
  'users list': ['users list [--account ID]', "every user (or the account's): id, account, e-mail"],
  'users reset-password': [
    'users reset-password EMAIL --password-stdin',
    "set a user's password (read from stdin) and sign the user out everywhere",
  ],
  'keys create': [
    'keys create --account ID [--type secret|publishable] [--environment live|test] [--name N] [--allowed-domain D]…',
    'another key for the account (a test key acts in test mode: docs/api.md#test-mode)',
  ],
  'keys list': ['keys list --account ID', "the account's keys (no secrets)"],
  'keys revoke': ['keys revoke ID', 'revoke a key'],
  'mail list': [
    'mail list [--limit N]',
    'the most recent mails (default 20), newest first: id, created, status, to (a test-mode mail: [test]), subject',
  ],
  'mail show': ['mail show ID', 'one mail: its headers and whole text body, with its links'],
  mcp: [
    'mcp --url URL [--toolsets a,b]',
    "relay MCP over stdio (desktop clients) to the server's /mcp at URL, with the key in\n" +
      '      KAIROS_API_KEY, listing only the named toolsets if given (docs/mcp.md); needs no store',
  ],
};

const FOOTER = `Every command accepts --json (print exactly one JSON object) and --help. A command other than
serve does not create a new embedded data directory (KAIROS_DATA_DIR, default ./data) unless given
--create. See README.md for the environment.`;

function describeCommands(names: readonly string[]): string {
  return names
    .map((n) => {
      const [synopsis, description] = COMMANDS[n]!;
      return `  kairos ${synopsis}\n      ${description}`;
    })
    .join('\n');
}

const USAGE = `Usage: kairos <command> [options]

Commands:
${describeCommands(Object.keys(COMMANDS))}
  kairos --version
      print the version

${FOOTER}`;

/** The usage of the commands named `prefix` or under it (`accounts`, `accounts create`), or null. */
function usageOf(prefix: string): string | null {
  const names = Object.keys(COMMANDS).filter((n) => n === prefix || n.startsWith(`${prefix} `));
  return names.length === 0 ? null : `Usage:\n${describeCommands(names)}\n\n${FOOTER}`;
}

class UsageError extends Error {
  /** The usage to print with the message (the command's own when known). */
  usage = USAGE;
}

/** The store to use is missing and must not be created silently: exit code 2, like a usage error. */
class StoreError extends Error {}

/** The version in package.json (next to src/ and dist/ alike). */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** Which store the config names, without credentials: for the one line the CLI prints to stderr. */
export function describeStore(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string {
  if (!config.databaseUrl) return `embedded PostgreSQL, data directory ${config.dataDir}`;
  try {
    const u = new URL(config.databaseUrl);
    return `external PostgreSQL at ${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'external PostgreSQL (DATABASE_URL)';
  }
}

/**
 * Says which store the command uses (one line on stderr) and, unless `create`, refuses an embedded
 * data directory that does not exist yet: a mistyped KAIROS_DATA_DIR or the wrong working directory
 * would otherwise start an empty store silently.
 */
function announceStore(config: Config, create: boolean): void {
  if (!config.databaseUrl && !create && !existsSync(config.dataDir))
    throw new StoreError(
      `no data directory at ${config.dataDir} (KAIROS_DATA_DIR, default ./data), so there is no store to use yet. ` +
        'Start the server once (kairos serve, or npm start) to create it, run this command from the directory ' +
        'it was created in, set KAIROS_DATA_DIR (or DATABASE_URL) to the store you mean, or pass --create ' +
        'to create an empty one now.',
    );
  process.stderr.write(`kairos: store: ${describeStore(config)}\n`);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/**
 * Runs one store-backed command: the store and the few modules the commands use, no HTTP, LISTEN or
 * workers (src/cli-runtime.ts; connecting to the running embedded server if there is one), then
 * closes it.
 */
async function withStore<T>(config: Config, fn: (rt: CliRuntime) => Promise<T>): Promise<T> {
  const [{ startCliRuntime }, { default: pino }] = await Promise.all([
    import('./cli-runtime.js'),
    import('pino'),
  ]);
  const log = pino({ level: 'warn' }, pino.destination(2));
  const rt = await startCliRuntime(config, log);
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}

/**
 * Under npm: once the process that started this one is gone (the process is handed to another
 * parent), signals itself SIGTERM, so the server stops as it does on a signal (its PostgreSQL with
 * it). `kill <pid of npm start>` makes npm signal the shell it runs the script in, which dies without
 * passing the signal on.
 */
function stopWithParent(): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.stderr.write(`kairos: the process that started this server (${parent}) is gone: stopping\n`);
    process.kill(process.pid, 'SIGTERM');
  }, 200);
  timer.unref();
}

function print(json: boolean, obj: object, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(obj)}\n` : `${human}\n`);
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      name: { type: 'string' },
      plan: { type: 'string' },
      'rate-limit': { type: 'string' },
      account: { type: 'string' },
      email: { type: 'string' },
      'password-stdin': { type: 'boolean', default: false },
      type: { type: 'string' },
      environment: { type: 'string' },
      'allowed-domain': { type: 'string', multiple: true },
      version: { type: 'boolean', short: 'V', default: false },
      create: { type: 'boolean', default: false },
      limit: { type: 'string' },
      processes: { type: 'string' },
      url: { type: 'string' },
      toolsets: { type: 'string' },
    },
  });
  const [cmd, sub, arg] = positionals;
  const json = values.json ?? false;
  if (values.version) {
    print(json, { version: version() }, version());
    return 0;
  }
  if (values.help || !cmd) {
    const usage = (cmd && (usageOf(`${cmd} ${sub ?? ''}`.trim()) ?? usageOf(cmd))) || USAGE;
    process.stdout.write(`${usage}\n`);
    return values.help ? 0 : 2;
  }
  try {
    if (cmd === 'mcp') return await mcpBridge(values.url, values.toolsets);
    return await run(cmd, sub, arg, values, json);
  } catch (err) {
    // A usage error names the usage of the command it is about, when there is one.
    if (err instanceof UsageError) err.usage = usageOf(`${cmd} ${sub ?? ''}`.trim()) ?? usageOf(cmd) ?? USAGE;
    throw err;
  }
}

/** `kairos mcp --url URL`: the stdio bridge (no config, no store: it only talks to a server). */
async function mcpBridge(url: string | undefined, toolsets: string | undefined): Promise<number> {
  if (!url) throw new UsageError('--url is required (the Kairos server, e.g. https://kairos.example.com)');
  const { mcpUrl, runStdioBridge } = await import('./modules/mcp/bridge.js');
  try {
    mcpUrl(url);
  } catch {
    throw new UsageError(`--url must be an absolute URL (got ${url})`);
  }
  const key = bridgeApiKey();
  if (!key)
    throw new UsageError('KAIROS_API_KEY must hold the API key to send as Bearer (secret or publishable)');
  return await runStdioBridge(url, key, toolsets === undefined ? {} : { toolsets });
}

type Values = {
  name?: string;
  plan?: string;
  'rate-limit'?: string;
  account?: string;
  email?: string;
  'password-stdin'?: boolean;
  type?: string;
  environment?: string;
  'allowed-domain'?: string[];
  create?: boolean;
  limit?: string;
  processes?: string;
};

async function run(
  cmd: string,
  sub: string | undefined,
  arg: string | undefined,
  values: Values,
  json: boolean,
): Promise<number> {
  const config = loadConfig();
  const withRuntime = <T>(fn: (rt: CliRuntime) => Promise<T>): Promise<T> => {
    announceStore(config, values.create ?? false);
    return withStore(config, fn);
  };
  const need = (v: string | undefined, flag: string): string => {
    if (!v) throw new UsageError(`${flag} is required`);
    if ((flag === '--account' || flag === 'the key ID') && !isUuid(v))
      throw new UsageError(`${flag} must be a UUID`);
    return v;
  };

  switch (`${cmd} ${sub ?? ''}`.trim()) {
    case 'serve': {
      const { isServeWorker, servePrimary, serveWorker } = await import('./cluster.js');
      if (isServeWorker()) {
        await serveWorker(config); // forked by a `serve --processes N` primary, on its store
        return -1;
      }
      const processes = values.processes === undefined ? config.processes : Number(values.processes);
      if (!Number.isInteger(processes) || processes < 1 || processes > MAX_PROCESSES)
        throw new UsageError(
          `--processes must be an integer from 1 to ${MAX_PROCESSES} (about one per CPU core; got ${values.processes})`,
        );
      process.stderr.write(`kairos: store: ${describeStore(config)}\n`);
      if (processes > 1) {
        await servePrimary(config, processes);
      } else {
        const { installSignalHandlers, startServer } = await import('./server.js');
        const running = await startServer(config);
        installSignalHandlers(running, { info: (m) => running.app?.log.info(m) });
      }
      if (config.stopWithParent) stopWithParent();
      return -1; // keep running: a one-process server until its signal, a primary until its workers exit
    }
    case 'migrate': {
      const applied = await withRuntime(async () => []);
      print(json, { migrated: true, applied }, 'Migrations are up to date.');
      return 0;
    }
    case 'accounts create': {
      const plan = (values.plan ?? 'free') as Plan;
      if (!['free', 'premium', 'enterprise'].includes(plan))
        throw new UsageError('--plan must be free, premium or enterprise');
      const rate = values['rate-limit'] !== undefined ? Number(values['rate-limit']) : null;
      if (rate !== null && (!Number.isInteger(rate) || rate < 1))
        throw new UsageError('--rate-limit must be a positive integer');
      const name = need(values.name, '--name');
      const out = await withRuntime((rt) =>
        rt.modules.accounts.createAccount({
          name,
          plan,
          rateLimitPerHour: rate,
        }),
      );
      print(
        json,
        out,
        `Account ${out.account.name} (${out.account.id}), plan ${out.account.plan}\n` +
          `Secret key (shown once, store it now): ${out.api_key.key}\n` +
          `Someone to sign in to the console: kairos users create --account ${out.account.id} --email E --password-stdin`,
      );
      return 0;
    }
    case 'accounts list': {
      const accounts = await withRuntime((rt) => rt.modules.accounts.listAccounts());
      print(
        json,
        { accounts },
        accounts.length === 0
          ? 'No accounts yet: kairos accounts create --name …'
          : accounts
              .map((a) => `${a.id}  ${a.name}  plan ${a.plan}, ${a.rate_limit_per_hour} requests/hour`)
              .join('\n'),
      );
      return 0;
    }
    case 'accounts update': {
      const id = need(arg, '--account');
      const plan = values.plan as Plan | undefined;
      if (plan !== undefined && !['free', 'premium', 'enterprise'].includes(plan))
        throw new UsageError('--plan must be free, premium or enterprise');
      const rawRate = values['rate-limit'];
      let rate: number | null | undefined;
      if (rawRate === 'default') rate = null;
      else if (rawRate !== undefined) {
        rate = Number(rawRate);
        if (!Number.isInteger(rate) || rate < 1)
          throw new UsageError('--rate-limit must be a positive integer (or "default")');
      }
      if (plan === undefined && rate === undefined) throw new UsageError('give --plan and/or --rate-limit');
      const account = await withRuntime((rt) =>
        rt.modules.accounts.updateAccount(id, {
          ...(plan !== undefined ? { plan } : {}),
          ...(rate !== undefined ? { rateLimitPerHour: rate } : {}),
        }),
      );
      print(
        json,
        { account },
        `Account ${account.name} (${account.id}): plan ${account.plan}, ${account.rate_limit_per_hour} requests/hour ` +
          '(running servers apply it at once)',
      );
      return 0;
    }
    case 'users create': {
      if (!values['password-stdin'])
        throw new UsageError('--password-stdin is required (the password is read from stdin)');
      const accountId = need(values.account, '--account');
      const email = need(values.email, '--email');
      const password = await readStdin();
      const user = await withRuntime((rt) =>
        rt.modules.accounts.createUser({
          accountId,
          email,
          password,
          ...(values.name !== undefined ? { name: values.name } : {}),
        }),
      );
      print(json, { user }, `User ${user.email} (${user.id}) created in account ${user.account_id}`);
      return 0;
    }
    case 'users list': {
      const accountId = values.account === undefined ? undefined : need(values.account, '--account');
      const users = await withRuntime((rt) => rt.modules.accounts.listUsers(accountId));
      print(
        json,
        { users },
        users.length === 0
          ? 'No users yet: kairos users create --account ID --email E --password-stdin'
          : users.map((u) => `${u.id}  account ${u.account_id}  ${u.email}`).join('\n'),
      );
      return 0;
    }
    case 'users reset-password': {
      if (!values['password-stdin'])
        throw new UsageError('--password-stdin is required (the new password is read from stdin)');
      const email = need(arg, 'the e-mail address');
      const password = await readStdin();
      const out = await withRuntime((rt) =>
        rt.modules.accounts.resetPassword(email, password).catch((err: unknown) => {
          if (err instanceof AppError && err.status === 404)
            throw new AppError(404, 'not-found', `${err.message}: kairos users list shows the users`);
          throw err;
        }),
      );
      print(
        json,
        out,
        `Password of ${out.user.email} (${out.user.id}) set; ${out.sessions_revoked} session(s) signed out`,
      );
      return 0;
    }
    case 'keys create': {
      const type = values.type ?? 'secret';
      if (type !== 'secret' && type !== 'publishable')
        throw new UsageError('--type must be secret or publishable');
      const environment = values.environment ?? 'live';
      if (environment !== 'live' && environment !== 'test')
        throw new UsageError('--environment must be live or test');
      const accountId = need(values.account, '--account');
      const out = await withRuntime((rt) =>
        rt.modules.apiKeys.create(accountId, {
          name: values.name ?? (type === 'secret' ? 'Secret key' : 'Publishable key'),
          key_type: type,
          environment,
          allowed_domains: values['allowed-domain'] ?? [],
        }),
      );
      const api_key = { ...out.api_key, key: out.key };
      const mode = environment === 'test' ? 'test ' : '';
      print(json, { api_key }, `${mode}${type} key ${api_key.id} (shown once, store it now): ${out.key}`);
      return 0;
    }
    case 'keys list': {
      const accountId = need(values.account, '--account');
      const all = await withRuntime(async (rt) => {
        const keys = [];
        let cursor: string | undefined;
        do {
          const pageOut = await rt.modules.apiKeys.list(accountId, { limit: 100, cursor });
          keys.push(...pageOut.api_keys);
          cursor = pageOut.pagination.next_cursor ?? undefined;
        } while (cursor);
        return keys;
      });
      print(
        json,
        { api_keys: all },
        all
          .map(
            (k) =>
              `${k.id}  ${k.key_type.padEnd(11)} ${k.environment.padEnd(4)} ${k.prefix}…${k.last4}  ${k.status.padEnd(7)} ${k.name}`,
          )
          .join('\n') || 'No keys.',
      );
      return 0;
    }
    case 'keys revoke': {
      const id = need(arg, 'the key ID');
      const key = await withRuntime(async (rt) => {
        const accountId = await rt.modules.apiKeys.accountOf(id);
        if (accountId === null) throw new AppError(404, 'not-found', `No API key ${id}`);
        return rt.modules.apiKeys.revoke(accountId, id);
      });
      print(json, { api_key: key }, `Key ${key.id} revoked.`);
      return 0;
    }
    case 'mail list': {
      const limit = values.limit === undefined ? 20 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new UsageError('--limit must be an integer from 1 to 1000');
      const mails = await withRuntime((rt) => rt.modules.mail.listRecent(limit));
      print(
        json,
        { mails },
        mails.length === 0
          ? 'No mails yet.'
          : mails
              .map(
                (m) =>
                  `${m.id}  ${m.created_at.toISOString()}  ${m.status.padEnd(10)}  ${m.livemode ? '' : '[test] '}${m.to ?? '(no address)'}  ${m.subject}`,
              )
              .join('\n'),
      );
      return 0;
    }
    case 'mail show': {
      const id = need(arg, 'the mail ID');
      const mail = await withRuntime((rt) => rt.modules.mail.get(id));
      if (!mail)
        throw new AppError(
          404,
          'not-found',
          `No mail ${id}: kairos mail list shows the recent mails and their ids`,
        );
      const links = [...new Set(mail.text.match(/https?:\/\/[^\s<>"]+/g) ?? [])];
      print(
        json,
        { mail: { ...mail, links } },
        [
          `Mail ${mail.id} (${mail.kind}), ${mail.status}${mail.livemode ? '' : ' (test mode: never sent)'}${mail.last_error ? `: ${mail.last_error}` : ''}`,
          `Date: ${mail.created_at.toISOString()}`,
          `To: ${mail.to ?? '(no address)'}`,
          `Subject: ${mail.subject}`,
          '',
          mail.text,
          ...(links.length > 0 ? ['', 'Links:', ...links.map((l) => `  ${l}`)] : []),
        ].join('\n'),
      );
      return 0;
    }
    default:
      throw new UsageError(`unknown command: ${[cmd, sub, arg].filter(Boolean).join(' ')}`);
  }
}

function report(err: unknown, json: boolean): number {
  let code = 1;
  let message: string;
  let extra: object = {};
  if (err instanceof UsageError) {
    code = 2;
    message = `${err.message}\n\n${err.usage}`;
  } else if (err instanceof StoreError) {
    code = 2;
    message = err.message;
  } else if (err instanceof ConfigError) {
    message = `configuration: ${err.message}`;
  } else if (err instanceof AppError) {
    message = err.message;
    extra = { status: err.status, type: err.slug, errors: err.extras.errors };
  } else if (err instanceof Error && err.message.startsWith('Unknown option')) {
    code = 2;
    message = `${err.message}\n\n${USAGE}`;
  } else {
    message = err instanceof Error ? err.message : String(err);
  }
  if (json)
    process.stdout.write(`${JSON.stringify({ error: { message: message.split('\n')[0], ...extra } })}\n`);
  else
    process.stderr.write(
      `kairos: ${message}\n${err instanceof AppError && err.extras.errors ? JSON.stringify(err.extras.errors) + '\n' : ''}`,
    );
  return code;
}

const argv = process.argv.slice(2);
main(argv).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => process.exit(report(err, argv.includes('--json'))),
);
