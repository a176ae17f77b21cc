#!/usr/bin/env node
// The kairos command. Runs the compiled build when present (npm run build), else the TypeScript
// sources through tsx, so a fresh clone works with no build step.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'main.js');
if (existsSync(built) && process.env.KAIROS_FROM_SOURCE !== 'true') {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'main.ts')).href);
}
