/**
 * The clients' asset bundler (docs/architecture.md#clients). Every folder under src/web/ but `shared/`
 * is one browser client; esbuild's JS API bundles it into memory: no build step for the operator, no
 * committed output, no CDN. In a client folder
 * - each top-level `<name>.ts` is a module script and each `<name>.css` a stylesheet, served at
 *   `/assets/<name>-<hash>.<ext>` (named by content hash, so immutable);
 * - each top-level `<name>.classic.ts` is a classic script (an IIFE: no module, no eval), for other
 *   sites' pages; its URL is its API, so it is not hashed: `/<name>.js`, served where the client's
 *   module decides.
 * Subfolders hold the client's shared code. A client is bundled once per process when first asked for
 * (a failed build is tried again on the next call); each asset is gzipped once.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** From src/platform/ and from dist/platform/ alike: the sources live in src/web. */
export const WEB_DIR = fileURLToPath(new URL('../../src/web/', import.meta.url));

/** Code every client may import; not a client itself. */
const SHARED = 'shared';

export interface Asset {
  /** `/assets/<name>-<hash>.<ext>`, or `/<name>.js` for a classic script. */
  path: string;
  type: string;
  /** The content's hash (an ETag for the unhashed classic scripts). */
  hash: string;
  body: Buffer;
  gzip: Buffer;
}

export interface ClientBundle {
  /** Module scripts and stylesheets, by entry name (`book`, `pages`). */
  entries: ReadonlyMap<string, Asset>;
  /** Classic scripts, by name (`embed`). */
  classic: ReadonlyMap<string, Asset>;
  /** The hashed assets (entries), by path. */
  byPath: ReadonlyMap<string, Asset>;
}

/** The client folders under src/web, sorted. */
export function webClients(): string[] {
  return readdirSync(WEB_DIR, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== SHARED)
    .map((e) => e.name)
    .sort();
}

const building = new Map<string, Promise<ClientBundle>>();

/** One client's bundles, built once per process. */
export function clientBundle(client: string): Promise<ClientBundle> {
  let promise = building.get(client);
  if (!promise) {
    promise = bundle(client);
    building.set(client, promise);
    promise.catch(() => {
      building.delete(client);
    });
  }
  return promise;
}

const TARGET = ['es2020', 'chrome100', 'firefox100', 'safari15'];
const CLASSIC = '.classic.ts';

/** An asset of `body` served at `path`. */
export function asset(path: string, body: Buffer): Asset {
  return {
    path,
    type: path.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
    hash: createHash('sha256').update(body).digest('base64url').slice(0, 22),
    body,
    gzip: gzipSync(body, { level: 9 }),
  };
}

/** A client's entry files: module scripts and stylesheets by name, and its classic scripts. */
export function clientEntries(client: string): { entries: Record<string, string>; classic: string[] } {
  const entries: Record<string, string> = {};
  const classic: string[] = [];
  const files = readdirSync(join(WEB_DIR, client), { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name)
    .sort();
  for (const file of files) {
    if (file.endsWith(CLASSIC)) {
      classic.push(file);
      continue;
    }
    const m = /^([a-z0-9_]+)\.(ts|css)$/.exec(file);
    if (!m) continue;
    const name = m[1]!;
    if (entries[name]) throw new Error(`src/web/${client}: two entries named ${name}`);
    entries[name] = file;
  }
  return { entries, classic };
}

async function bundle(client: string): Promise<ClientBundle> {
  // Loaded when first needed: processes that never serve a client never start esbuild.
  const { build } = await import('esbuild');
  const absWorkingDir = join(WEB_DIR, client);
  const { entries, classic } = clientEntries(client);
  const common = {
    absWorkingDir,
    bundle: true,
    minify: true,
    target: TARGET,
    write: false,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
  } as const;
  // A classic script runs on other sites' pages: an IIFE, no module, no eval.
  const classicBuilds = classic.map(async (file) => {
    const result = await build({ ...common, entryPoints: [file], format: 'iife' });
    const out = result.outputFiles[0];
    if (!out) throw new Error(`esbuild produced no bundle for src/web/${client}/${file}`);
    return [
      file.slice(0, -CLASSIC.length),
      asset(`/${file.slice(0, -CLASSIC.length)}.js`, Buffer.from(out.contents)),
    ] as const;
  });
  const result = await build({
    ...common,
    entryPoints: entries,
    format: 'esm',
    outdir: 'out',
    entryNames: '[name]-[hash]',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const byPath = new Map<string, Asset>();
  const named = new Map<string, Asset>();
  for (const file of result.outputFiles) {
    const name = file.path.slice(file.path.lastIndexOf('/') + 1);
    const a = asset(`/assets/${name}`, Buffer.from(file.contents));
    byPath.set(a.path, a);
    named.set(name.slice(0, name.lastIndexOf('-')), a);
  }
  for (const name of Object.keys(entries)) {
    if (!named.has(name)) throw new Error(`esbuild produced no ${name} bundle for src/web/${client}`);
  }
  return { entries: named, classic: new Map(await Promise.all(classicBuilds)), byPath };
}

/** The license notices of the packages the bundles contain, served beside them. */
export function licenseNotices(packages: readonly string[]): string {
  const require = createRequire(import.meta.url);
  return packages
    .map((pkg) => {
      try {
        const dir = dirname(require.resolve(`${pkg}/package.json`));
        return `${pkg}\n\n${readFileSync(`${dir}/LICENSE`, 'utf8').trim()}\n`;
      } catch {
        return `${pkg}: MIT License, see the package`;
      }
    })
    .join('\n---\n\n');
}
