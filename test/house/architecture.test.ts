/** docs/architecture.md stays true to the code it maps (docs/architecture.md#worked-example-booking-links). */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The text of the first fenced code block after `heading`. */
function blockAfter(doc: string, heading: string): string {
  const at = doc.indexOf(heading);
  expect(at, `docs/architecture.md has a "${heading}" heading`).toBeGreaterThanOrEqual(0);
  const open = doc.indexOf('```ts\n', at);
  const close = doc.indexOf('\n```\n', open);
  expect(open).toBeGreaterThan(at);
  return doc.slice(open + '```ts\n'.length, close + 1);
}

describe('docs/architecture.md', () => {
  const doc = read('docs/architecture.md');

  it('prints src/modules/booking-links/module.ts exactly as its worked example', () => {
    expect(blockAfter(doc, '### Worked example: booking links')).toBe(
      read('src/modules/booking-links/module.ts'),
    );
  });

  it('lists every module folder under src/modules in its module table', () => {
    const folders = readdirSync(new URL('../../src/modules/', import.meta.url), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    const table = doc.slice(
      doc.indexOf('| module | what it does | needs |'),
      doc.indexOf('\n\n', doc.indexOf('| module |')),
    );
    for (const folder of folders) {
      const name = folder.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      expect(table, `module ${folder}`).toMatch(new RegExp(`\\| \`${name}\`( \\(\`${folder}/\`\\))? \\|`));
    }
  });
});

describe('docs/architecture.md, the module table', () => {
  it("gives each module's needs exactly as its definition lists them", async () => {
    const { MODULES } = await import('../../src/modules/index.js');
    const doc = read('docs/architecture.md');
    for (const def of MODULES) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${def.name}\``));
      expect(row, `a row for ${def.name}`).toBeDefined();
      const needs = row!.split('|').at(-2)!.trim();
      expect(needs === '—' ? [] : needs.split(', '), `needs of ${def.name}`).toEqual([...def.needs]);
    }
  });
});

describe('docs/architecture.md names every file it maps (npm run check:house)', () => {
  const files = [
    'src/platform/clock.ts',
    'src/platform/clock.test.ts',
    'src/db/purge.ts',
    'src/db/migrations/0001_platform.ts',
    'src/lib/slots.ts',
    'src/jobs/runner.ts',
    'src/modules/module.ts',
    'src/modules/bookings/service.ts',
    'src/modules/bookings/write.ts',
    'src/modules/calendars/providers/google.ts',
    'src/modules/api-keys/stats.ts',
    'src/main.ts',
  ];
  const map = [
    '`src/platform/clock.ts` the one clock; `db/purge.ts` retention purges; `lib/slots.ts`;',
    '`jobs/runner.ts`; `modules/module.ts`; `bookings/write.ts`; `calendars/providers/google.ts`',
  ].join('\n');

  it('fails a non-test source file under src/platform, db, lib, jobs or a module folder that the map does not name', async () => {
    const { unmapped } = await import('../../scripts/house.js');
    // Standard rooms (service.ts) are covered by the module shape; tests, migrations and files
    // outside the mapped folders are not asked for; `keys/stats.ts` is not `api-keys/stats.ts`.
    expect(unmapped(files, `${map}\n\`keys/stats.ts\``)).toEqual(['src/modules/api-keys/stats.ts']);
    expect(unmapped(files, `${map}\n\`api-keys/stats.ts\``)).toEqual([]);
  });

  it('passes on the real tree: every such file is on the map', async () => {
    const { listFiles, unmapped } = await import('../../scripts/house.js');
    const root = new URL('../../', import.meta.url).pathname;
    expect(unmapped(listFiles(root, 'src'), read('docs/architecture.md'))).toEqual([]);
  });
});
