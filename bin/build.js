// The server's sources transpiled ahead for the `kairos` command (bin/kairos.js) when there is no
// `npm run build`: the esbuild transform tsx would apply module by module, done once and kept in
// `.kairos-build/` at the repository's root (beside `src/`, as `dist/` is, so what the code finds
// beside itself is where it is for a build). A command then starts without tsx's loader hooks, which
// cost a store command 2 to 3 s on a busy 2-core machine (docs/performance.md, "The CLI's start").
// The build is redone when a source file is added, removed or changed (its size or mtime).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The server's source files (no tests, no declarations, no browser code under src/web). */
export function sourceFiles(src) {
  return readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
    .filter((f) => !f.startsWith('web/'))
    .sort();
}

/** Transpiles `src`'s server sources into `outdir` (ES modules for Node 20, one file per source). */
export async function transpile(src, outdir, opts = {}) {
  const { build } = await import('esbuild');
  await build({
    entryPoints: sourceFiles(src).map((f) => join(src, f)),
    outdir,
    outbase: src,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
    ...opts,
  });
}

/**
 * The entry (`main.js`) of an up-to-date build of `root`'s sources, building it first when the sources
 * changed since; null when it cannot be built (a read-only checkout): then the caller runs the sources.
 */
export async function cachedBuild(root) {
  const src = join(root, 'src');
  const dir = join(root, '.kairos-build');
  const hash = createHash('sha256');
  for (const f of sourceFiles(src)) {
    const s = statSync(join(src, f));
    hash.update(`${f}\0${s.size}\0${s.mtimeMs}\n`);
  }
  const stamp = hash.digest('hex');
  const stampFile = join(dir, 'sources.sha256');
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return join(dir, 'main.js');
  removeOrphans(root);
  // Built aside and swapped in, so that a command started meanwhile never sees half a build.
  const fresh = `${dir}-${process.pid}`;
  const old = `${dir}-old-${process.pid}`;
  try {
    rmSync(fresh, { recursive: true, force: true });
    await transpile(src, fresh);
    writeFileSync(join(fresh, 'sources.sha256'), stamp);
    // Another command made the same build meanwhile and may be running from it: keep that one.
    if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
      rmSync(fresh, { recursive: true, force: true });
      return join(dir, 'main.js');
    }
    if (existsSync(dir)) renameSync(dir, old);
    renameSync(fresh, dir);
  } catch {
    rmSync(fresh, { recursive: true, force: true });
    return existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp ? join(dir, 'main.js') : null;
  } finally {
    rmSync(old, { recursive: true, force: true });
  }
  return join(dir, 'main.js');
}

/** Removes the half-made builds of commands that were killed while building (named for their process). */
function removeOrphans(root) {
  for (const name of readdirSync(root)) {
    const m = /^\.kairos-build-(?:old-)?(\d+)$/.exec(name);
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1])))
      rmSync(join(root, name), { recursive: true, force: true });
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}
