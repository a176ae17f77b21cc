#!/usr/bin/env node
// The kairos command. Runs the compiled build when present (npm run build); else a build of the sources
// kept up to date in .kairos-build/ (bin/build.js), so a fresh clone works with no build step and a
// command does not pay for tsx's loader; else (a read-only checkout, or KAIROS_FROM_SOURCE=true) the
// TypeScript sources through tsx.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'main.js');
const fromSource = process.env.KAIROS_FROM_SOURCE === 'true';
if (existsSync(built) && !fromSource) {
  await import(pathToFileURL(built).href);
} else {
  const { cachedBuild } = await import('./build.js');
  const entry = fromSource ? null : await cachedBuild(root);
  if (entry) {
    await import(pathToFileURL(entry).href);
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    await import(pathToFileURL(join(root, 'src', 'main.ts')).href);
  }
}
