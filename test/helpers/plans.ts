/**
 * The store's plan for a query, as JSON text, for tests that prove a read does not grow with the
 * past: with sequential scans off, whatever the table's size, the plan shows what the indexes can be
 * asked.
 */
import { CompiledQuery, sql } from 'kysely';
import type { Db, Tx } from '../../src/db/store.js';

type Built = (trx: Tx) => { compile(): CompiledQuery };

/** The plan for the query with its parameters' values known (a custom plan). */
export async function indexPlan(db: Db, build: Built): Promise<string> {
  return db.transaction().execute(async (trx) => {
    await sql`SET LOCAL enable_seqscan = off`.execute(trx);
    const q = build(trx).compile();
    const explained = await trx.executeQuery(
      CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${q.sql}`, [...q.parameters]),
    );
    return JSON.stringify(explained.rows);
  });
}

/** Each plan's statement has a name of its own: one left behind by a failed test breaks no other. */
let prepared = 0;

/**
 * The plan a prepared statement of the query gets once the store settles on a generic one, as a
 * statement the app names and repeats may (docs/design.md#store): parameters unknown. A partial
 * index serves it only when the query states the index's condition as a literal, not a parameter.
 */
export async function genericPlan(db: Db, build: Built): Promise<string> {
  return db.transaction().execute(async (trx) => {
    await sql`SET LOCAL plan_cache_mode = force_generic_plan`.execute(trx);
    await sql`SET LOCAL enable_seqscan = off`.execute(trx);
    const q = build(trx).compile();
    const name = `generic_plan_${process.pid}_${++prepared}`;
    await trx.executeQuery(CompiledQuery.raw(`PREPARE ${name} AS ${q.sql}`));
    try {
      // EXECUTE's arguments are expressions, not bind parameters: the values go in as literals.
      const literal = (p: unknown) =>
        typeof p === 'number'
          ? String(p)
          : `'${(p instanceof Date ? p.toISOString() : String(p)).replaceAll("'", "''")}'`;
      const explained = await trx.executeQuery(
        CompiledQuery.raw(`EXPLAIN (FORMAT JSON) EXECUTE ${name}(${q.parameters.map(literal).join(', ')})`),
      );
      return JSON.stringify(explained.rows);
    } finally {
      await trx.executeQuery(CompiledQuery.raw(`DEALLOCATE ${name}`));
    }
  });
}
