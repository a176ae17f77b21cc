import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { transpile } from '../../bin/build.js';
import { processAlive } from '../../src/db/embedded.js';

const REPO = join(import.meta.dirname, '..', '..');

/**
 * The server's sources transpiled once for a test run, for the `kairos` processes the tests start
 * (test/helpers/process.ts): bin/build.js's transform (tsx's, module by module, done ahead), so
 * each process starts without tsx's loader hooks (about 1.3 s sooner on a 2-core machine; the suite
 * starts dozens). The build is a directory of the repository's root, as `dist/` is, so what the code
 * finds beside itself (`../package.json`, `src/web`) is where it is for a build. Answers the build's
 * `main.js`, and `remove` for the end of the run.
 */
export async function buildForProcesses(): Promise<{ entry: string; remove(): void }> {
  removeOrphanBuilds(REPO);
  const dir = join(REPO, `.test-build-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  await transpile(join(REPO, 'src'), dir, { sourcemap: 'inline' });
  return { entry: join(dir, 'main.js'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Removes from `root` the builds of earlier runs that were killed before their end removed them (a
 * run's build is named for its process, so a build whose process is gone is no run's).
 */
export function removeOrphanBuilds(root: string): void {
  for (const name of readdirSync(root)) {
    const m = /^\.test-build-(\d+)$/.exec(name);
    if (m && Number(m[1]) !== process.pid && !processAlive(Number(m[1]))) {
      rmSync(join(root, name), { recursive: true, force: true });
    }
  }
}
