/**
 * Round trips a transaction does not wait for (docs/design.md#store, "Pipelined transactions").
 *
 * The pool's connections run in node-postgres's pipeline mode (`pipeline: true`): a query is written as
 * soon as it is issued, not when the one before it has been answered. Callers still wait for each
 * statement before issuing the next, with two exceptions made here, on the transaction's connection:
 *
 * - **BEGIN** is sent without waiting for its answer. The transaction's first statement is written right
 *   behind it, and its caller gets BEGIN's answer first: BEGIN fails only with its connection, and then
 *   the statement behind it fails too (nothing it carries runs) and the transaction is over.
 * - **COMMIT** is sent right behind a statement marked as the transaction's final write (`finalWrite`),
 *   before that statement is answered. The statement's caller still gets its result or its error; when
 *   it fails, the store ends the transaction and answers the COMMIT behind it with a rollback, so the
 *   failure is what the transaction answers. The transaction must issue nothing after its final write
 *   (that is refused) and must not fail after it: by then it has committed.
 *
 * A booking's transaction is then two round trips where it was four: BEGIN with the locked read, and
 * the booking's one write statement with COMMIT.
 */
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  PostgresDialect,
  type PostgresDialectConfig,
  PostgresDriver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

const FINAL = Symbol('kairos.finalWrite');

/** `query`, marked as its transaction's last statement: COMMIT goes with it (see above). */
export function finalWrite(query: CompiledQuery): CompiledQuery {
  return { ...query, [FINAL]: true } as CompiledQuery;
}

function isFinal(query: CompiledQuery): boolean {
  return (query as CompiledQuery & { [FINAL]?: boolean })[FINAL] === true;
}

/** A pooled connection and what it has sent without waiting for the answer. */
class PipelinedConnection implements DatabaseConnection {
  /** BEGIN's answer, while the transaction's first statement has not been issued. */
  begun: Promise<QueryResult<unknown>> | null = null;
  /** The answer to the COMMIT sent behind a final write, until the transaction ends. */
  committing: Promise<QueryResult<unknown>> | null = null;
  /** The final write failed: the store rolled the transaction back. */
  finalFailed = false;
  /** BEGIN failed (with its connection): there is no transaction to roll back. */
  beginFailed = false;
  /** Between BEGIN and the transaction's end: outside one, a final write is an ordinary statement. */
  inTransaction = false;

  constructor(readonly inner: DatabaseConnection) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.committing !== null) {
      throw new Error('a statement was issued after its transaction’s final write');
    }
    const begun = this.begun;
    this.begun = null;
    // Issued before BEGIN is answered: in pipeline mode node-postgres writes it now, behind BEGIN.
    const result = this.inner.executeQuery<R>(query);
    const final = this.inTransaction && isFinal(query);
    if (final) {
      const committing = this.inner.executeQuery(CompiledQuery.raw('commit'));
      committing.catch(() => {}); // waited for by commitTransaction or rollbackTransaction
      this.committing = committing;
    }
    if (begun !== null) {
      try {
        await begun;
      } catch (err) {
        result.catch(() => {}); // it fails with the connection; BEGIN's error is the one to tell
        this.beginFailed = true;
        if (final) this.finalFailed = true;
        throw err;
      }
    }
    try {
      return await result;
    } catch (err) {
      if (final) this.finalFailed = true;
      throw err;
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    const begun = this.begun;
    this.begun = null;
    if (begun !== null) await begun;
    yield* this.inner.streamQuery<R>(query, chunkSize);
  }
}

class PipelinedDriver extends PostgresDriver {
  readonly #wrapped = new WeakMap<DatabaseConnection, PipelinedConnection>();

  override async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await super.acquireConnection();
    let connection = this.#wrapped.get(inner);
    if (!connection) {
      connection = new PipelinedConnection(inner);
      this.#wrapped.set(inner, connection);
    }
    return connection;
  }

  override async beginTransaction(
    connection: DatabaseConnection,
    settings: TransactionSettings,
  ): Promise<void> {
    if (!(connection instanceof PipelinedConnection)) return super.beginTransaction(connection, settings);
    connection.inTransaction = true;
    if (settings.isolationLevel || settings.accessMode) return super.beginTransaction(connection, settings);
    const begun = connection.inner.executeQuery(CompiledQuery.raw('begin'));
    begun.catch(() => {}); // waited for by the transaction's first statement
    connection.begun = begun;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof PipelinedConnection) connection.inTransaction = false;
    if (!(connection instanceof PipelinedConnection) || connection.committing === null) {
      return super.commitTransaction(connection);
    }
    const committing = connection.committing;
    connection.committing = null;
    if (connection.finalFailed) {
      // Its caller saw the error and went on: the store answered the COMMIT with a rollback.
      connection.finalFailed = false;
      await committing.catch(() => {});
      throw new Error('the transaction was rolled back: its final write failed');
    }
    await committing;
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof PipelinedConnection) connection.inTransaction = false;
    if (connection instanceof PipelinedConnection && connection.beginFailed) {
      connection.beginFailed = false;
      connection.committing = null;
      connection.finalFailed = false;
      return; // the connection failed before the transaction began: nothing to roll back
    }
    if (!(connection instanceof PipelinedConnection) || connection.committing === null) {
      return super.rollbackTransaction(connection);
    }
    // The COMMIT is already on its way: after a failed final write the store rolls back by itself.
    const committing = connection.committing;
    connection.committing = null;
    connection.finalFailed = false;
    await committing.catch(() => {});
  }

  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof PipelinedConnection) {
      // Kysely ends every transaction with COMMIT or ROLLBACK, which wait for these; defensive.
      const pending = [connection.begun, connection.committing];
      connection.begun = null;
      connection.committing = null;
      connection.finalFailed = false;
      connection.beginFailed = false;
      connection.inTransaction = false;
      for (const p of pending) await p?.catch(() => {});
    }
    // What super.acquireConnection answered: the driver's own connection type, which it does not export.
    return super.releaseConnection(unwrap(connection) as Parameters<PostgresDriver['releaseConnection']>[0]);
  }
}

function unwrap(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof PipelinedConnection ? connection.inner : connection;
}

/** PostgresDialect with pipelined BEGIN and COMMIT (its pool must be in pipeline mode: db/store.ts). */
export class PipelinedPostgresDialect extends PostgresDialect {
  readonly #config: PostgresDialectConfig;

  constructor(config: PostgresDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new PipelinedDriver(this.#config);
  }
}
