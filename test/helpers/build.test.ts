import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeOrphanBuilds } from './build.js';

describe("the test run's build", () => {
  it('removes the builds of runs whose process is gone, and keeps those of running ones', () => {
    const root = mkdtempSync(join(tmpdir(), 'kairos-builds-'));
    try {
      const gone = spawnSync(process.execPath, ['-e', '0']).pid;
      for (const pid of [gone, process.pid, process.ppid]) mkdirSync(join(root, `.test-build-${pid}`));
      mkdirSync(join(root, '.test-build-notes'));
      removeOrphanBuilds(root);
      expect(existsSync(join(root, `.test-build-${gone}`))).toBe(false);
      expect(existsSync(join(root, `.test-build-${process.pid}`))).toBe(true);
      expect(existsSync(join(root, `.test-build-${process.ppid}`))).toBe(true);
      expect(existsSync(join(root, '.test-build-notes'))).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
