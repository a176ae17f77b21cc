import { describe, expect, it } from 'vitest';
import { judgeDeps } from '../../scripts/deps.js';
import {
  judge,
  processWide,
  registeredTables,
  type SideDoor,
  tableUses,
  valuesIn,
} from '../../scripts/house.js';

const known = new Set(['bookings', 'users', 'proposals', 'proposal_participants', 'principals']);

describe('house check: table uses', () => {
  it('finds tables named by Kysely calls, with aliases, lists and the line of the call', () => {
    const src = [
      "db.selectFrom('bookings as b')",
      "  .innerJoin('users as u', 'u.id', 'b.user_id')",
      "  .selectFrom(['proposals', 'principals'])",
      "await db.insertInto(\n  'proposal_participants')",
    ].join('\n');
    expect(tableUses('f.ts', src, known).map((u) => `${u.line}:${u.table}`)).toEqual([
      '1:bookings',
      '2:users',
      '3:proposals',
      '3:principals',
      '4:proposal_participants',
    ]);
  });

  it('finds tables in raw sql text, whatever the case, and not in interpolations or prose', () => {
    const $ = '$'; // source text that holds `${…}`, without a template placeholder in this file
    const src = [
      '// read from bookings in prose is not a query',
      'const q = sql<{ n: number }>`',
      '  SELECT count(*) FROM Bookings b',
      `  JOIN users u ON u.id = ${$}{sql\`x\`}`,
      `  WHERE ${$}{other} AND EXISTS (SELECT 1 FROM unnest(${$}{ids}))\`;`,
      'sql`UPDATE proposals SET x = 1`; sql`insert into principals (id) values (1)`',
    ].join('\n');
    expect(tableUses('f.ts', src, known).map((u) => `${u.line}:${u.table}`)).toEqual([
      '3:bookings',
      '4:users',
      '6:proposals',
      '6:principals',
    ]);
  });

  it('ignores names that are not tables (CTEs, functions, columns)', () => {
    const src = "db.with('recent', q).selectFrom('recent'); sql`SELECT 1 FROM generate_series(1, 2)`";
    expect(tableUses('f.ts', src, known)).toEqual([]);
  });

  it('reads the tables a tables.ts registers on DB', () => {
    const src = "declare module '../../db/types.js' {\n  interface DB {\n    a_b: A;\n    c: C;\n  }\n}";
    expect(registeredTables(src)).toEqual(['a_b', 'c']);
  });
});

describe('house check: the verdict', () => {
  const door: SideDoor = {
    file: 'src/modules/pages/service.ts',
    line: 3,
    table: 'bookings',
    module: 'pages',
    owner: 'bookings',
  };

  it('fails a side door that is not in the debt list, naming file, line and table', () => {
    const v = judge([door], [], { oversize: [], sideDoors: [] }, () => true);
    expect(v.errors).toEqual([
      "src/modules/pages/service.ts:3: module pages touches table bookings, owned by bookings (ask bookings's api.ts instead)",
    ]);
  });

  it('allows a listed side door and reports it as debt', () => {
    const v = judge(
      [door],
      [],
      { oversize: [], sideDoors: [{ module: 'pages', table: 'bookings' }] },
      () => true,
    );
    expect(v.errors).toEqual([]);
    expect(v.debt).toHaveLength(1);
  });

  it('fails a debt entry that is no longer needed, so the list cannot rot', () => {
    const v = judge(
      [],
      [],
      { oversize: ['src/x.ts'], sideDoors: [{ module: 'pages', table: 'bookings' }] },
      () => true,
    );
    expect(v.errors).toHaveLength(2);
    expect(v.errors.join('\n')).toMatch(/pages → bookings is no longer needed/);
    expect(v.errors.join('\n')).toMatch(/oversize entry src\/x\.ts is no longer needed/);
  });

  it('fails a file over 600 lines that is not listed', () => {
    const v = judge([], [{ file: 'src/y.ts', lines: 601 }], { oversize: [], sideDoors: [] }, () => true);
    expect(v.errors).toEqual(['src/y.ts: 601 lines, more than 600: split it into rooms of one job']);
  });
});

describe('house check: tests that change their whole process', () => {
  it('finds writes to process.env, fake timers, stubbed globals and module mocks, with the line', () => {
    const src = [
      'const a = process.env.KAIROS_X ?? 1;',
      "process.env.KAIROS_X = '1';",
      "process.env['A'] ??= 'b';",
      'delete process.env.KAIROS_X;',
      'vi.useFakeTimers();',
      "vi.stubEnv('A', 'b');",
      "vi.mock('pg');",
      'if (process.env.A === "b") {}',
    ].join('\n');
    const found = processWide('t.test.ts', src);
    expect(found.map((f) => f.slice(0, f.indexOf(' outlives')))).toEqual([
      't.test.ts:2: a write to process.env (process.env.KAIROS_X =)',
      "t.test.ts:3: a write to process.env (process.env['A'] ??=)",
      't.test.ts:4: a delete from process.env (delete process.env)',
      't.test.ts:5: a process-wide vi stub (vi.useFakeTimers()',
      't.test.ts:6: a process-wide vi stub (vi.stubEnv()',
      't.test.ts:7: a process-wide vi stub (vi.mock()',
    ]);
  });
});

describe('import rules: the circle debt', () => {
  const circle = (from: string, ...cycle: string[]) => ({
    type: 'cycle',
    from,
    to: cycle[0]!,
    rule: { name: 'no-circular', severity: 'error' },
    cycle: cycle.map((name) => ({ name })),
  });

  it('allows a listed circle whichever file depcruise reads it from, and reports it as debt', () => {
    const v = judgeDeps([circle('b.ts', 'a.ts', 'b.ts')], ['a.ts → b.ts → a.ts']);
    expect(v).toEqual({ errors: [], debt: ['circle  b.ts → a.ts → b.ts'] });
  });

  it('fails a new circle, any other broken rule, and a listed circle that is gone', () => {
    const layer = {
      type: 'dependency',
      from: 'src/db/x.ts',
      to: 'src/platform/y.ts',
      rule: { name: 'db-below-platform', severity: 'error' },
    };
    const v = judgeDeps([circle('c.ts', 'd.ts', 'c.ts'), layer], ['a.ts → b.ts → a.ts']);
    expect(v.errors).toEqual([
      'no-circular: c.ts → d.ts → c.ts',
      'db-below-platform: src/db/x.ts → src/platform/y.ts',
      'scripts/house-debt.json: cycles entry "a.ts → b.ts → a.ts" is no longer needed: delete it',
    ]);
  });
});

describe('house check: api.ts holds types only', () => {
  it('finds value imports, value re-exports and values, and lets types, type imports and augmentations pass', () => {
    const src = [
      "import type { A } from './a.js';",
      "import { type B, type C } from './b.js';",
      "import { D } from './d.js';",
      "export type { E } from './e.js';",
      "export { f } from './f.js';",
      'export interface G { h: string }',
      'export type I = A | B;',
      'export const J = 1;',
      'export function k() {}',
      'export class L {}',
      "declare module '../module.js' { interface ExtensionPointTypes { m: G } }",
    ].join('\n');
    expect(valuesIn('api.ts', src)).toEqual([
      'api.ts:3: a value import',
      'api.ts:5: a value re-export',
      'api.ts:8: a value (variable)',
      'api.ts:9: a value (function)',
      'api.ts:10: a value (class)',
    ]);
  });

  it('fails a value in an api.ts not listed as debt, and a listed module whose api.ts is clean', () => {
    const v = judge(
      [],
      [],
      { oversize: [], sideDoors: [], valueApis: ['mail'] },
      () => true,
      new Map([['pages', ['x']]]),
    );
    expect(v.errors).toEqual([
      "x in module pages's api.ts, which holds types only: move it out",
      'scripts/house-debt.json: valueApis entry mail is no longer needed: delete it',
    ]);
  });
});
