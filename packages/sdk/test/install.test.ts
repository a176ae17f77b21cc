/**
 * The package can be imported wherever npm put it: after the repository's install (npm runs a
 * workspace's `prepare`), from a folder (`npm install <path>`: npm links it and runs its `prepare`)
 * and from a tarball (`npm pack`). The package exports only `dist/`, so each of these must build it.
 * The copies are made in a temporary directory: the repository's own `dist/` is never touched, and
 * TypeScript comes from npm's cache as the repository's lockfile pins it.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SDK = join(import.meta.dirname, '..');
const REPO = join(SDK, '..', '..');
const dir = join(tmpdir(), `kairos-sdk-install-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The environment without what an enclosing `npm test` exports (npm_config_*, npm_lifecycle_*…). */
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));

function run(cmd: string, args: string[], cwd: string): string {
  const out = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: 60_000 });
  if (out.status !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} (in ${cwd}) exited ${out.status}:\n${out.stdout}\n${out.stderr}`,
    );
  }
  return out.stdout;
}

const npm = (cwd: string, ...args: string[]) =>
  run('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], cwd);

/** What a consumer sees: the exports' types and the client, imported by name as Node resolves it. */
function importFrom(cwd: string): string {
  return run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "const m = await import('@kairos/sdk'); console.log(typeof m.Kairos, typeof m.verifyWebhook);",
    ],
    cwd,
  ).trim();
}

function writeJson(file: string, value: unknown): void {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** A workspace root like the repository's: the package under packages/sdk, TypeScript as root devDependency. */
function workspaceCopy(): string {
  const root = join(dir, 'repo');
  const rootPackage = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  mkdirSync(root, { recursive: true });
  writeJson(join(root, 'package.json'), {
    name: 'kairos-install-check',
    private: true,
    type: 'module',
    workspaces: ['packages/*'],
    devDependencies: { typescript: rootPackage.devDependencies.typescript },
  });
  cpSync(SDK, join(root, 'packages', 'sdk'), {
    recursive: true,
    filter: (from) => {
      const rel = relative(SDK, from).split(/[\\/]/)[0]!;
      return !['dist', 'node_modules', 'test'].includes(rel) && !rel.endsWith('.tgz');
    },
  });
  return root;
}

function emptyProject(name: string): string {
  const project = join(dir, name);
  mkdirSync(project, { recursive: true });
  writeJson(join(project, 'package.json'), { name, version: '1.0.0', private: true, type: 'module' });
  return project;
}

describe('@kairos/sdk as installed', () => {
  it('imports in the repository after its install', () => {
    expect(importFrom(REPO)).toBe('function function');
  });

  it('imports after an install at a workspace root, from a folder and from a packed tarball', {
    timeout: 120_000,
  }, () => {
    const root = workspaceCopy();
    const sdk = join(root, 'packages', 'sdk');
    npm(root, 'install');
    expect(existsSync(join(sdk, 'dist', 'index.d.ts'))).toBe(true);
    expect(importFrom(root)).toBe('function function');

    // `npm install <folder>` links the folder and builds it there (TypeScript from the repository's install).
    rmSync(join(sdk, 'dist'), { recursive: true });
    const fromFolder = emptyProject('from-folder');
    npm(fromFolder, 'install', sdk);
    expect(importFrom(fromFolder)).toBe('function function');

    // A tarball carries dist/ with its declarations, and no sources or tests: nothing to build where it lands.
    rmSync(join(sdk, 'dist'), { recursive: true });
    npm(sdk, 'pack', '--pack-destination', dir);
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    const fromTarball = emptyProject('from-tarball');
    npm(fromTarball, 'install', join(dir, tarball!));
    const installed = join(fromTarball, 'node_modules', '@kairos', 'sdk');
    expect(existsSync(join(installed, 'dist', 'index.d.ts'))).toBe(true);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    expect(importFrom(fromTarball)).toBe('function function');
  });
});
