import Database from 'better-sqlite3';

export interface PoolLimits {
  /** How long a store call waits for SQLite's single write lock before failing closed with 503. */
  readonly acquireTimeoutMs: number;
  readonly statementTimeoutMs: number;
}

/**
 * The SQLite database file and its connections: `db` serves reads and short write transactions; a transactional
 * claim takes a connection of its own for its open transaction (SQLite has one writer at a time, and a transaction
 * held across `await` must not capture the statements of other requests).
 */
export class SqlitePool {
  readonly db: Database.Database;
  private readonly idle: Database.Database[] = [];
  /** Keys claimed by an open transaction in this process, with its connection: a duplicate answers at once. */
  readonly openClaims = new Map<string, Database.Database>();

  constructor(readonly file: string) {
    if (file === ':memory:' || file === '')
      throw new Error('the SQLite store needs a database file (WAL mode)');
    this.db = open(file);
  }

  /** A connection for one transaction; give it back with release(). */
  connect(): Database.Database {
    return this.idle.pop() ?? open(this.file);
  }

  release(connection: Database.Database): void {
    if (connection.open && !connection.inTransaction && this.idle.length < 4) this.idle.push(connection);
    else if (connection.open) connection.close();
  }

  end(): void {
    for (const connection of this.idle.splice(0)) connection.close();
    if (this.db.open) this.db.close();
  }
}

function open(file: string): Database.Database {
  const db = new Database(file);
  // WAL: readers never wait for the writer. busy_timeout 0: better-sqlite3 waits synchronously, which would block
  // the event loop (and the very request holding the lock); the store waits for the write lock asynchronously.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 0');
  db.pragma('foreign_keys = ON');
  return db;
}

/** `sqlite:path`, `file:path` or a plain path (relative to the working directory). */
export function createPool(url: string, _limits?: PoolLimits | number, _max?: number): SqlitePool {
  return new SqlitePool(url.replace(/^(sqlite|file):(\/\/)?/, ''));
}
