/**
 * The pages' client code (src/web), bundled by esbuild's JS API into memory: no build step for the
 * operator, no committed output, no CDN (docs/architecture.md#pages). One bundle per page plus one
 * stylesheet, named by content hash (served immutable), gzipped once. Built on first use and kept for
 * the life of the process; `prepareAssets()` starts it early.
 */
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
  body: Buffer;
  gzip: Buffer;
}

export interface Assets {
  book: Asset;
  manage: Asset;
  css: Asset;
  byPath: ReadonlyMap<string, Asset>;
}

const ENTRIES = { book: 'book.ts', manage: 'manage.ts', pages: 'pages.css' };

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

async function bundle(): Promise<Assets> {
  // Loaded when first needed: processes that never serve a page never start esbuild.
  const { build } = await import('esbuild');
  const result = await build({
    absWorkingDir: WEB_DIR,
    entryPoints: ENTRIES,
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
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
    const body = Buffer.from(file.contents);
    const asset: Asset = {
      path: `/assets/${name}`,
      type: name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
      body,
      gzip: gzipSync(body, { level: 9 }),
    };
    byPath.set(asset.path, asset);
    named[name.slice(0, name.indexOf('-'))] = asset;
  }
  const need = (name: string): Asset => {
    const a = named[name];
    if (!a) throw new Error(`esbuild produced no ${name} bundle`);
    return a;
  };
  return { book: need('book'), manage: need('manage'), css: need('pages'), byPath };
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
