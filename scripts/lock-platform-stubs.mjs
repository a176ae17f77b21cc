#!/usr/bin/env node
// The npm registry reachable from our build machines serves only the linux-x64 builds of
// platform-specific optional packages (esbuild, rollup, biome). `npm install` then leaves the
// other platforms' optional dependencies out of package-lock.json, and `npm ci` refuses such a
// lock. This script adds an entry for each missing optional dependency, tagged with the os/cpu/libc
// its name says, so npm skips it on every other platform exactly as it would with a full lock.
// Run after `npm install`: `node scripts/lock-platform-stubs.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const OS = [
  'darwin',
  'win32',
  'linux',
  'android',
  'freebsd',
  'openbsd',
  'netbsd',
  'sunos',
  'aix',
  'openharmony',
  'cygwin',
];
const CPU = [
  'x64',
  'arm64',
  'arm',
  'ia32',
  'ppc64',
  's390x',
  'riscv64',
  'loong64',
  'mips64el',
  'wasm32',
  'x86',
];
const lockPath = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const pkgs = lock.packages;
let added = 0;
for (const [path, meta] of Object.entries(pkgs)) {
  for (const [dep, range] of Object.entries(meta.optionalDependencies ?? {})) {
    const base = path === '' ? '' : `${path}/`;
    const candidates = [`${base}node_modules/${dep}`, `node_modules/${dep}`];
    if (candidates.some((c) => pkgs[c])) continue;
    const tokens = dep.replace(/^@[^/]+\//, '').split(/[-_]/);
    const os =
      tokens.find((t) => OS.includes(t)) ??
      (tokens.includes('windows') ? 'win32' : tokens.includes('wasi') ? 'wasi' : 'unknown-os');
    const cpu = tokens.find((t) => CPU.includes(t)) ?? 'unknown-cpu';
    const entry = {
      version: String(range).replace(/^[\^~>=<\s]+/, ''),
      optional: true,
      os: [os],
      cpu: [cpu],
    };
    if (meta.dev) entry.dev = true;
    if (tokens.includes('musl')) entry.libc = ['musl'];
    else if (os === 'linux') entry.libc = ['glibc'];
    pkgs[`node_modules/${dep}`] = entry;
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-platform-stubs: added ${added} entries`);
