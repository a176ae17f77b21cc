// The SDK as a browser gets it: src/index.ts bundled and minified as one ES module (esbuild), and its
// gzipped size (types are erased, so they weigh nothing). Used by the browser test and `npm run bench`.
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export async function bundleSdk(): Promise<{ code: string; bytes: number; gzipBytes: number }> {
  const out = await build({
    entryPoints: [join(import.meta.dirname, '..', 'src', 'index.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
  });
  const code = out.outputFiles[0]!.text;
  return { code, bytes: Buffer.byteLength(code), gzipBytes: gzipSync(code, { level: 9 }).length };
}
