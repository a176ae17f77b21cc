import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { compiledPart, part, rowsInsert, statement } from './parts.js';
import type { DB } from './types.js';

// Compiles only: the pool never connects.
const kysely = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool() }) });
const NOW = new Date('2026-06-01T00:00:00Z');

const occupancy = (owner: string, start: Date, end: Date) => ({
  owner_id: owner,
  principal_id: 'p1',
  during: part`tstzrange(${start}, ${end}, '[)')`,
});

describe('statement parts: text made once per shape', () => {
  it('rowsInsert writes the text and parameters Kysely writes for the same rows', () => {
    const rows = [
      { queue: 'a', payload: '{}', run_at: NOW, attempts: 0, created_at: NOW },
      { queue: 'b', payload: '[]', run_at: NOW, attempts: 0, created_at: NOW },
    ];
    const ours = statement([rowsInsert('jobs', rows, ['queue'])]);
    const theirs = kysely.insertInto('jobs').values(rows).returning('queue').compile();
    expect(ours.sql).toBe(theirs.sql);
    expect(ours.parameters).toEqual(theirs.parameters);
  });

  it('a part inside a row is spliced in place, with its parameters numbered in the order of the text', () => {
    const start = new Date('2026-06-01T09:00:00Z');
    const end = new Date('2026-06-01T09:30:00Z');
    const ours = statement([rowsInsert('booking_occupancy', [occupancy('o1', start, end)])]);
    const theirs = kysely
      .insertInto('booking_occupancy')
      .values({ owner_id: 'o1', principal_id: 'p1', during: sql<string>`tstzrange(${start}, ${end}, '[)')` })
      .compile();
    expect(ours.sql).toBe(theirs.sql);
    expect(ours.parameters).toEqual(['o1', 'p1', start, end]);
  });

  it('parts and literals join into one statement numbered across parts; nested parts keep their place', () => {
    const cond = part`x = ${2}`;
    const q = statement([
      'WITH a AS (',
      part`SELECT ${1} AS v WHERE ${cond}`,
      ') SELECT ',
      part`${'z'}::text`,
    ]);
    expect(q.sql).toBe('WITH a AS (SELECT $1 AS v WHERE x = $2) SELECT $3::text');
    expect(q.parameters).toEqual([1, 2, 'z']);
  });

  it('the same shape reuses its text with new parameters; another row count or another column set is another text', () => {
    const one = (id: string) => statement([rowsInsert('events', [{ id, type: 't' }])]);
    const a = one('evt_1');
    const b = one('evt_2');
    expect(b.sql).toBe(a.sql);
    expect(b.parameters).toEqual(['evt_2', 't']);
    const two = statement([
      rowsInsert('events', [
        { id: '1', type: 't' },
        { id: '2', type: 't' },
      ]),
    ]);
    expect(two.sql).not.toBe(a.sql);
    expect(two.parameters).toHaveLength(4);
    const other = statement([rowsInsert('events', [{ id: '1', account_id: 'a' }])]);
    expect(other.sql).toContain('"account_id"');
  });

  it('a column given as undefined is left out (as Kysely does); rows that give other columns are refused', () => {
    const q = statement([rowsInsert('events', [{ id: '1', type: undefined }])]);
    expect(q.sql).toBe('insert into "events" ("id") values ($1)');
    expect(() => rowsInsert('events', [{ id: '1' }, { id: '2', type: 't' }])).toThrow(/other columns/);
    expect(() => rowsInsert('events', [{ id: '1', type: 't' }, { id: '2' }])).toThrow(/other columns/);
    expect(() => rowsInsert('events', [])).toThrow(/no rows/);
  });

  it('a statement Kysely compiled joins as a part with its parameters renumbered', () => {
    const deleted = compiledPart(kysely.deleteFrom('jobs').where('id', 'in', ['1', '2']).compile());
    const q = statement(['WITH d AS (', deleted, ') SELECT ', part`${'x'}::text`]);
    expect(q.sql).toBe('WITH d AS (delete from "jobs" where "id" in ($1, $2)) SELECT $3::text');
    expect(q.parameters).toEqual(['1', '2', 'x']);
  });
});
