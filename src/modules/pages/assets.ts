/**
 * The pages' client code (src/web), bundled by esbuild's JS API into memory: no build step for the
 * operator, no committed output, no CDN (docs/architecture.md#pages). One bundle per page plus one
 * stylesheet, named by content hash (served immutable), gzipped once. Built on first use and kept for
 * the life of the process; `prepareAssets()` starts it early.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** From src/modules/pages/ and from dist/modules/pages/ alike: the sources live in src/web. */
export const WEB_DIR = fileURLToPath(new URL('../../../src/web/', import.meta.url));

export interface Asset {
  /** `/assets/<name>-<hash>.<ext>` */
  path: string;
  type: string;
  /** The content's hash (an ETag for `/embed.js`). */
  hash: string;
  body: Buffer;
  gzip: Buffer;
}

/** The pages' scripts, by entry name. */
export type PageScript = 'book' | 'manage' | 'proposal' | 'claim' | 'invitation';

export interface Assets extends Record<PageScript, Asset> {
  css: Asset;
  /** `/embed.js`: the script a host page loads (one classic script, not hashed: its URL is the API). */
  embed: Asset;
  byPath: ReadonlyMap<string, Asset>;
}

const SCRIPTS: readonly PageScript[] = ['book', 'manage', 'proposal', 'claim', 'invitation'];
const ENTRIES = {
  ...Object.fromEntries(SCRIPTS.map((s) => [s, `${s}.ts`])),
  pages: 'pages.css',
};

let building: Promise<Assets> | null = null;

/** The bundles, built once per process (a failed build is tried again on the next call). */
export function prepareAssets(): Promise<Assets> {
  if (!building) {
    building = bundle();
    building.catch(() => {
      building = null;
    });
  }
  return building;
}

const TARGET = ['es2020', 'chrome100', 'firefox100', 'safari15'];

function asset(path: string, body: Buffer): Asset {
  return {
    path,
    type: path.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
    hash: createHash('sha256').update(body).digest('base64url').slice(0, 22),
    body,
    gzip: gzipSync(body, { level: 9 }),
  };
}

async function bundle(): Promise<Assets> {
  // Loaded when first needed: processes that never serve a page never start esbuild.
  const { build } = await import('esbuild');
  // The embed runs on other sites' pages: a classic script (an IIFE), no module, no eval.
  const embedBuild = build({
    absWorkingDir: WEB_DIR,
    entryPoints: ['embed.ts'],
    bundle: true,
    minify: true,
    format: 'iife',
    target: TARGET,
    write: false,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
  });
  const result = await build({
    absWorkingDir: WEB_DIR,
    entryPoints: ENTRIES,
    bundle: true,
    minify: true,
    format: 'esm',
    target: TARGET,
    write: false,
    outdir: 'out',
    entryNames: '[name]-[hash]',
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const byPath = new Map<string, Asset>();
  const named: Record<string, Asset> = {};
  for (const file of result.outputFiles) {
    const name = file.path.slice(file.path.lastIndexOf('/') + 1);
    const a = asset(`/assets/${name}`, Buffer.from(file.contents));
    byPath.set(a.path, a);
    named[name.slice(0, name.indexOf('-'))] = a;
  }
  const embedFile = (await embedBuild).outputFiles[0];
  if (!embedFile) throw new Error('esbuild produced no embed bundle');
  const embed = asset('/embed.js', Buffer.from(embedFile.contents));
  const need = (name: string): Asset => {
    const a = named[name];
    if (!a) throw new Error(`esbuild produced no ${name} bundle`);
    return a;
  };
  const scripts = Object.fromEntries(SCRIPTS.map((s) => [s, need(s)])) as Record<PageScript, Asset>;
  return { ...scripts, css: need('pages'), embed, byPath };
}

/** The license notices of what the bundles contain, served beside them (`/assets/licenses.txt`). */
export function licenses(): string {
  const require = createRequire(import.meta.url);
  return ['preact', 'htm']
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
