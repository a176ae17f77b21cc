/**
 * The Kysely dialect of the app's store: PostgreSQL, with the notifications of a transaction sent
 * right after its COMMIT, in the same message (docs/design.md#store, "Notifications after commit").
 *
 * PostgreSQL serialises the commits of transactions that sent NOTIFY: each takes one lock for the
 * whole database before its commit record and holds it until the record is flushed to disk. Every
 * booking notified (its jobs' queues, the trigger on its occupancy), so with a durable store the
 * bookings' commits waited for each other's fsync instead of sharing one (`pgbench`, 32 clients,
 * an insert per transaction: 15k commits/s without NOTIFY, 4.8k with one).
 *
 * A transaction begun through this dialect sets `kairos.defer_notify`; there, `kairos_notify` (the
 * SQL function every notification of Kairos goes through, migration 0019) only notes the channel
 * and payload. The COMMIT is sent as `COMMIT; CALL kairos_flush_notify()`, one message: PostgreSQL
 * runs the second statement in a transaction of its own once the first has committed, and that one
 * writes nothing, so it does not wait for the disk while it holds the lock. What listeners see is
 * unchanged: each notification once, after the data it announces is visible, none for a transaction
 * rolled back (the note is a setting, undone with the transaction or savepoint). A process that dies
 * after sending the COMMIT still has its notifications sent: the server has the whole message.
 *
 * Outside such a transaction (a statement on its own) `kairos_notify` notifies at once. Migrations
 * run on the plain dialect (`migrate` in store.ts): before 0019 the function and the procedure do not
 * exist.
 */
import {
  type CompiledQuery as Compiled,
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  PostgresDialect,
  type PostgresDialectConfig,
  type TransactionSettings,
} from 'kysely';

/** Sent with BEGIN: notifications of this transaction wait for its COMMIT message. */
const DEFER = `SET LOCAL kairos.defer_notify = 'on'`;
/** Sent with COMMIT: what the transaction noted, notified once it has committed. */
const FLUSH = 'CALL kairos_flush_notify()';

function begin(settings: TransactionSettings): Compiled {
  let start = 'BEGIN';
  if (settings.isolationLevel || settings.accessMode) {
    start = 'START TRANSACTION';
    if (settings.isolationLevel) start += ` ISOLATION LEVEL ${settings.isolationLevel.toUpperCase()}`;
    if (settings.accessMode) start += ` ${settings.accessMode.toUpperCase()}`;
  }
  return CompiledQuery.raw(`${start}; ${DEFER}`);
}

const COMMIT = CompiledQuery.raw(`COMMIT; ${FLUSH}`);

/** PostgreSQL's driver with BEGIN and COMMIT as above; everything else is the stock driver's. */
class DeferredNotifyDriver implements Driver {
  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  acquireConnection(): Promise<DatabaseConnection> {
    return this.inner.acquireConnection();
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await connection.executeQuery(begin(settings));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(COMMIT);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(connection);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }

  // Savepoints (bookings try hosts inside them) stay the stock driver's.
  savepoint: Driver['savepoint'] = (...args) => this.inner.savepoint!(...args);
  rollbackToSavepoint: Driver['rollbackToSavepoint'] = (...args) => this.inner.rollbackToSavepoint!(...args);
  releaseSavepoint: Driver['releaseSavepoint'] = (...args) => this.inner.releaseSavepoint!(...args);
}

/** PostgreSQL with notifications sent after commit (see the top of this file). */
export class KairosDialect implements Dialect {
  private readonly inner: PostgresDialect;

  constructor(config: PostgresDialectConfig) {
    this.inner = new PostgresDialect(config);
  }

  createDriver(): Driver {
    return new DeferredNotifyDriver(this.inner.createDriver());
  }

  createQueryCompiler() {
    return this.inner.createQueryCompiler();
  }

  createAdapter() {
    return this.inner.createAdapter();
  }

  createIntrospector(...args: Parameters<Dialect['createIntrospector']>) {
    return this.inner.createIntrospector(...args);
  }
}
