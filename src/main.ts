import { parseArgs } from 'node:util';
import pino from 'pino';
import { type Config, ConfigError, loadConfig } from './config.js';
import type { Plan } from './modules/api-keys/service.js';
import { AppError } from './platform/errors.js';
import { isUuid } from './platform/ids.js';
import { type Runtime, startRuntime } from './runtime.js';
import { installSignalHandlers, startServer } from './server.js';

const USAGE = `Usage: kairos <command> [options]

Commands:
  serve                                   run the API server (PORT, HOST, DATABASE_URL, …)
  migrate                                 apply database migrations and exit
  accounts create --name N [--plan free|premium|enterprise] [--rate-limit N]
                                          create an account and its first secret key
  accounts list                           every account with its plan and hourly limit
  accounts update ID [--plan free|premium|enterprise] [--rate-limit N|default]
                                          change an account's plan or its own limit (enterprise)
  users create --account ID --email E --password-stdin
                                          create a user who can sign in (password read from stdin)
  keys create --account ID [--type secret|publishable] [--name N] [--allowed-domain D]…
  keys list --account ID
  keys revoke ID

Every command accepts --json (print exactly one JSON object). See README.md for the environment.`;

class UsageError extends Error {}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/**
 * Runs one store-backed command: the runtime without HTTP, LISTEN or workers (connecting to the
 * running embedded server if there is one), then closes it.
 */
async function withRuntime<T>(config: Config, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const log = pino({ level: 'warn' }, pino.destination(2));
  const rt = await startRuntime({ config, log, http: false, notifier: false, workers: false, usage: false });
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
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
      'allowed-domain': { type: 'string', multiple: true },
    },
  });
  const [cmd, sub, arg] = positionals;
  if (values.help || !cmd) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const config = loadConfig();
  const json = values.json ?? false;
  const need = (v: string | undefined, flag: string): string => {
    if (!v) throw new UsageError(`${flag} is required`);
    if ((flag === '--account' || flag === 'the key ID') && !isUuid(v))
      throw new UsageError(`${flag} must be a UUID`);
    return v;
  };

  switch (`${cmd} ${sub ?? ''}`.trim()) {
    case 'serve': {
      const running = await startServer(config);
      installSignalHandlers(running, { info: (m) => running.app?.log.info(m) });
      return -1; // keep running
    }
    case 'migrate': {
      const applied = await withRuntime(config, async () => []);
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
      const out = await withRuntime(config, (rt) =>
        rt.modules.accounts.createAccount({
          name: need(values.name, '--name'),
          plan,
          rateLimitPerHour: rate,
        }),
      );
      print(
        json,
        out,
        `Account ${out.account.name} (${out.account.id}), plan ${out.account.plan}\n` +
          `Secret key (shown once, store it now): ${out.api_key.key}`,
      );
      return 0;
    }
    case 'accounts list': {
      const accounts = await withRuntime(config, (rt) => rt.modules.accounts.listAccounts());
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
      const account = await withRuntime(config, (rt) =>
        rt.modules.accounts.updateAccount(id, {
          ...(plan !== undefined ? { plan } : {}),
          ...(rate !== undefined ? { rateLimitPerHour: rate } : {}),
        }),
      );
      print(
        json,
        { account },
        `Account ${account.name} (${account.id}): plan ${account.plan}, ${account.rate_limit_per_hour} requests/hour ` +
          '(running servers apply it within a minute)',
      );
      return 0;
    }
    case 'users create': {
      if (!values['password-stdin'])
        throw new UsageError('--password-stdin is required (the password is read from stdin)');
      const password = await readStdin();
      const user = await withRuntime(config, (rt) =>
        rt.modules.accounts.createUser({
          accountId: need(values.account, '--account'),
          email: need(values.email, '--email'),
          password,
        }),
      );
      print(json, { user }, `User ${user.email} (${user.id}) created in account ${user.account_id}`);
      return 0;
    }
    case 'keys create': {
      const type = values.type ?? 'secret';
      if (type !== 'secret' && type !== 'publishable')
        throw new UsageError('--type must be secret or publishable');
      const out = await withRuntime(config, (rt) =>
        rt.modules.apiKeys.create({
          accountId: need(values.account, '--account'),
          name: values.name ?? (type === 'secret' ? 'Secret key' : 'Publishable key'),
          keyType: type,
          allowedDomains: values['allowed-domain'] ?? [],
        }),
      );
      const api_key = { ...out.api_key, key: out.key };
      print(json, { api_key }, `${type} key ${api_key.id} (shown once, store it now): ${out.key}`);
      return 0;
    }
    case 'keys list': {
      const accountId = need(values.account, '--account');
      const all = await withRuntime(config, async (rt) => {
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
              `${k.id}  ${k.key_type.padEnd(11)} ${k.prefix}…${k.last4}  ${k.status.padEnd(7)} ${k.name}`,
          )
          .join('\n') || 'No keys.',
      );
      return 0;
    }
    case 'keys revoke': {
      const id = need(arg, 'the key ID');
      const key = await withRuntime(config, async (rt) => {
        const accountId = await rt.modules.apiKeys.accountOf(id);
        if (accountId === null) throw new AppError(404, 'not-found', `No API key ${id}`);
        return rt.modules.apiKeys.revoke(accountId, id);
      });
      print(json, { api_key: key }, `Key ${key.id} revoked.`);
      return 0;
    }
    default:
      throw new UsageError(`unknown command: ${positionals.join(' ')}`);
  }
}

function report(err: unknown, json: boolean): number {
  let code = 1;
  let message: string;
  let extra: object = {};
  if (err instanceof UsageError) {
    code = 2;
    message = `${err.message}\n\n${USAGE}`;
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
