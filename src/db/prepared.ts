/**
 * Named prepared statements for the statements a connection sends again (docs/design.md#store,
 * "Prepared statements").
 *
 * Kysely sends every query through node-postgres as an unnamed statement, which PostgreSQL parses,
 * analyses and plans on every execution. node-postgres prepares a statement once per connection when
 * the query has a `name`; this gives the repeated ones a name. A parameterised statement is named on
 * its second use on a connection (one-off texts, such as an IN list of an unusual length, stay
 * unnamed) and at most `limit` of them per connection are (PostgreSQL keeps each one's plan in the
 * connection's backend, so the memory is bounded). Texts without parameters are left alone: they may
 * hold several statements (migrations), which a prepared statement cannot.
 *
 * From its sixth execution PostgreSQL may run a prepared statement with a generic plan (made without
 * the parameters' values) when that is no dearer; planning is most of what naming saves. Two things a
 * generic plan cannot do, and what this code base does about them:
 * - infer an `ON CONFLICT` arbiter from a partial unique index when the predicate holds a parameter
 *   (`WHERE status = $1` fails with 42P10): such predicates are written as literals (`sql.lit`);
 * - survive a changed result row type (a `SELECT *` over a table altered while the process runs):
 *   schema changes happen in migrations, before a process serves.
 * PostgreSQL re-plans by itself when a table a statement reads changes otherwise.
 */
import type pg from 'pg';

/** Texts counted once and not yet named, per connection, before the counts start over. */
const MAX_SEEN = 1000;

type Query = (...args: unknown[]) => unknown;

/** Names the repeated parameterised statements of each new connection of `pool` (at most `limit`). */
export function prepareRepeatedStatements(pool: pg.Pool, limit: number): void {
  if (limit <= 0) return;
  pool.on('connect', (client) => nameRepeated(client, limit));
}

function nameRepeated(client: pg.PoolClient, limit: number): void {
  const named = new Map<string, string>();
  const seen = new Set<string>();
  const target = client as unknown as { query: Query };
  target.query = function (this: unknown, ...args: unknown[]) {
    // The prototype's query, looked up per call: whatever wraps pg.Client.prototype.query later (a
    // bench counting statements) still sees every query.
    const query = (Object.getPrototypeOf(client) as { query: Query }).query;
    const [text, values] = args;
    if (args.length === 2 && typeof text === 'string' && Array.isArray(values) && values.length > 0) {
      let name = named.get(text);
      if (name === undefined && named.size < limit) {
        if (seen.has(text)) {
          seen.delete(text);
          name = `kairos_${named.size + 1}`;
          named.set(text, name);
        } else {
          if (seen.size >= MAX_SEEN) seen.clear();
          seen.add(text);
        }
      }
      if (name !== undefined) return query.call(client, { name, text, values });
    }
    return query.apply(client, args);
  };
}
