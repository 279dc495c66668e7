import type { Database } from '../config/schema.js';
import { describeDuration } from '../config/duration.js';
import type { StackDesign } from './types.js';

/**
 * What the store code the scaffold generates for each database really does: the claim statement, its round trips
 * for a new key and for a replay, whether a transaction can include the action's writes, and how each call is
 * bounded. Every sentence the document says about the claim and the store's time-outs comes from here, so it is
 * true of the store file it describes (test/render/storeClaims.test.ts checks the names against that code).
 */

/** The budgets of the detection policy, in milliseconds. */
export interface StoreBudgets {
  acquireTimeoutMs: number;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  storeTimeoutMs: number;
}

export interface StoreFailure {
  failure: string;
  answer: string;
  why: string;
  /** Where the row also covers a concurrent duplicate the store answers as in flight (409): which one. */
  duplicate?: string;
}

/** The row as an HTTP design shows it: the answer already names the duplicate's 409. */
export function withoutDuplicate(failure: StoreFailure): StoreFailure {
  const { duplicate: _duplicate, ...row } = failure;
  return row;
}

/**
 * The same row for the plain idempotent(fn) wrapper, which answers no HTTP: core.ts turns a store failure into
 * StoreUnavailableError (naming the operation, no retry-after) and an in-flight duplicate into InFlightError.
 */
export function asWrapperFailure(failure: StoreFailure): StoreFailure {
  const { duplicate, ...row } = failure;
  return {
    ...row,
    answer: `Throws StoreUnavailableError ("not processed"; it names the store operation and carries no retry-after)${duplicate ? `; InFlightError with retryAfterSeconds for ${duplicate}` : ''}`,
  };
}

export interface StoreFacts {
  kind: StackDesign['storeKind'];
  /** The "Atomic claim" row: the claim in words and code. */
  claimPrimitive: string;
  /** The claim named in a phrase, for the anti-pattern it replaces: "the single INSERT … ON CONFLICT on the primary key". */
  claimShort: string;
  /** After "With several instances, ": which clock every lease comparison uses. */
  leaseClock: string;
  /** A store without a schema: how it makes a second record for a key impossible (else PRIMARY KEY (scope, key)). */
  uniqueness?: string;
  /** A store without a schema: what stands in for the DDL's constraints, introducing the store's table or script. */
  schemaIntro?: string;
  /**
   * A store without a schema: what it has in place of PRIMARY KEY and CHECK (the "store DDL" constraint's evidence,
   * with `uniqueness`), and how a record changes after its claim only through writes that check its fencing token.
   */
  noConstraints?: string;
  stateGuard?: string;
  /** A store that deletes its own records (TTL): why there is no cleanup job. */
  selfCleaning?: string;
  /** A store that deletes its own records: the build-order step that checks it does, in place of scheduling a cleanup job. */
  expiryCheck?: string;
  /** A store without a migration to run: the build order's first step (else "Run the migration"). */
  provision?: (table: string) => { title: string; detail: string; safety: string };
  /** After "Nothing time-varying goes into a key … Expiry is ": where a record's expiry is kept. */
  expiryField: string;
  /** After "The scope and action are ": where the record keeps them apart from the caller's key. */
  keyParts: string;
  /** Section 5: after "Lease-mode actions: ", what a crashed run leaves and how the next attempt takes it over. */
  crashedLease: (leases: string) => string;
  /** The runbook's stuck-record steps: how to list them and how to release one (the middle step is the same for all). */
  stuck: (table: string, keyColumn: string) => { list: string; release: string };
  /**
   * The runbook's "Table and partition maintenance" entry in this store's terms: what growth looks like, and the
   * steps (the cleanup job, the store's own housekeeping, what comes after a single table).
   */
  maintenance: (table: string, highVolume: boolean) => { symptom: string; steps: string[] };
  /** How the overview says a key is claimed: "with one atomic statement". */
  claimIn: string;
  /**
   * Names the document gives this store's code (statements, options, session settings), each found in the files
   * of the store module the scaffold generates; empty for a database the scaffold has no store for.
   */
  codeNames: readonly string[];
  /** False where the store has no transaction that could include the action's own writes (lease mode only). */
  transactional: boolean;
  /**
   * A lease-only store whose database does have transactions: why the store shares none with the handler (else the
   * document says the store has no transaction that could include the action's writes). Lower case, no full stop.
   */
  leaseOnly?: string;
  /** What the generated suites run against, where that is not simply "a real <database>". */
  testTarget?: string;
  /** Transactional mode: what a concurrent duplicate waits on. */
  duplicateWaitsOn?: string;
  /** The claim's round trips for a new key and for a replay, in lease and (where offered) transactional mode. */
  roundTrips: (where: string, label: string) => string;
  /** The "Duplicate detection" cell: how a duplicate is told from a new key (the target follows)... */
  detectionSummary: string;
  /** ...and then the store's time-outs. */
  detectionTimeouts: (b: StoreBudgets) => string;
  /** How every store call is bounded, and why a claim the client was told failed takes nothing. */
  bounds: (b: StoreBudgets) => string;
  /** Section 4: how an expired record or a lapsed lease is taken over, and what fences the old owner. */
  reclaim: string;
  /** Section 4: whose clock the lease and expiry are measured on. */
  clock: string;
  /** Section 4: why two nodes cannot both take over the same lapsed lease. */
  aba: string;
  /** The store's rows of "When the store or the completion fails" (the transactional completion row follows). */
  failures: (b: StoreBudgets) => StoreFailure[];
}

const sec = describeDuration;
/** The MySQL store sets innodb_lock_wait_timeout in whole seconds, at least one. */
const lockSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1_000));

const NO_CONNECTION = (b: StoreBudgets): StoreFailure => ({
  failure: `No pooled connection within ${sec(b.acquireTimeoutMs)}`,
  answer: '503 problem "not processed", Retry-After',
  why: 'Nothing was sent to the database, so nothing can commit.',
});

/** Stuck records of a store with rows (and the MongoDB sketches, which keep the same fields). */
const STUCK_ROWS = (table: string, keyColumn: string) => ({
  list: `List the stuck rows: rows of ${table} whose status is PROCESSING and whose locked_until lies more than a minute in the past, oldest first, at most 50 (never by key from a log: logs hold only key hashes).`,
  release: `If the effect happened, complete the record by hand with the real response; if not, release it so the next retry runs: delete the row by scope, ${keyColumn}, status PROCESSING and the fencing_token you read, so a worker that came back is not overruled.`,
});

const CROWDED_TABLE = 'store_size keeps growing although traffic is flat, or claim latency creeps up (table or index bloat).';
const CLEANUP_RUNS = 'Check that the cleanup job runs (its log line and store_size dropping after each run) and that its batches come back short.';
/** "above 100,000 keys a day" or, past it, "at this volume": the spec's partitioning threshold. */
const atVolume = (highVolume: boolean, start = false) => {
  const words = highVolume ? 'at this volume' : 'above 100,000 keys a day';
  return start ? words[0]!.toUpperCase() + words.slice(1) : words;
};

const ROW_LEASE = (leases: string) =>
  `the record stays PROCESSING with a lease in locked_until. Once the lease lapses (${leases}), the next attempt reclaims it in the claim statement, with fencing_token incremented, and runs the action again.`;

/**
 * What every store with rows (and the MongoDB sketches) says alike: where the key parts and expiry live, the row
 * lease, the stuck-row steps, and a maintenance entry that starts with the cleanup job; only the store's own
 * housekeeping steps differ.
 */
const rowRecord = (
  housekeeping: (table: string, highVolume: boolean) => string[],
): Pick<StoreFacts, 'keyParts' | 'expiryField' | 'crashedLease' | 'stuck' | 'maintenance'> => ({
  keyParts: 'stored in their own columns',
  expiryField: 'a column (expires_at)',
  crashedLease: ROW_LEASE,
  stuck: STUCK_ROWS,
  maintenance: (table, highVolume) => ({ symptom: CROWDED_TABLE, steps: [CLEANUP_RUNS, ...housekeeping(table, highVolume)] }),
});

/** A store the app reaches over the network with no server-side time-out: its one failure row, in its own words. */
const UNREACHABLE = (b: StoreBudgets, store: string, call: string, lateCall: string, release: string): StoreFailure => ({
  failure: `No connection to ${store} within ${sec(b.acquireTimeoutMs)}, or ${call} unanswered after ${sec(b.storeTimeoutMs)}`,
  answer: '503 problem "not processed", Retry-After',
  why: `No action ran. ${lateCall} after the store gave up is followed by a release ${release}, so the retry is not held off for a lease.`,
});

const POSTGRES: StoreFacts = {
  kind: 'relational',
  claimPrimitive: 'INSERT … ON CONFLICT (scope, key) DO UPDATE … WHERE the existing row is expired or its lease has lapsed, RETURNING the row and whether it was taken',
  claimShort: "the single INSERT … ON CONFLICT on the primary key",
  leaseClock:
    "every lease comparison uses the database's now(); the application never sends a timestamp.",
  claimIn: 'with one atomic statement',
  codeNames: ['INSERT INTO', 'ON CONFLICT (scope, key) DO UPDATE', 'RETURNING', 'statement_timeout', 'lock_timeout', 'BEGIN', 'COMMIT'],
  transactional: true,
  duplicateWaitsOn: "the key's unique index",
  roundTrips: (where, label) =>
    `A duplicate is recognised in one round trip: one primary-key lookup on ${label}, ${where}, that takes no lock, writes nothing and commits nothing. In lease mode that round trip is the claim itself: one INSERT … ON CONFLICT statement in autocommit, which reads the record first and inserts (and commits) only when the key is new, has expired, or its lease lapsed under the same request. A duplicate of a finished request (replay or conflicting reuse), or of one still in flight, is answered from that read with nothing inserted, locked or committed; a new key is claimed in the same round trip, with no read before it (a pool made without the store's session limits adds one plain read before the claim). In transactional mode a request starts with one plain read in autocommit, which answers a duplicate of a finished request alone; a new key pays one more round trip, BEGIN and the claim, after which the action's writes and the completion share a single COMMIT (the running request's row is not committed yet, so its duplicate waits on the key at the claim, then replays).`,
  detectionSummary:
    `lease mode: the claim is the one statement, an autocommit INSERT … ON CONFLICT that reads the record first, answers a duplicate of a finished or running request from it (no lock, no write, no commit) and otherwise claims the new key in the same round trip; transactional mode: one plain read answers a duplicate of a finished request, and a new key adds BEGIN, the claim, and one COMMIT shared with the action's writes`,
  detectionTimeouts: (b) => `store time-outs ${sec(b.acquireTimeoutMs)} to get a connection, ${sec(b.statementTimeoutMs)} per statement`,
  bounds: (b) =>
    `Every store call is bounded twice: at most ${sec(b.acquireTimeoutMs)} to get a pooled connection and at most ${sec(b.statementTimeoutMs)} per statement, enforced by the server (statement_timeout, and lock_timeout ${sec(b.lockTimeoutMs)} for a claim waiting on a concurrent duplicate, both session parameters of the store's connections). Past that the request fails closed with 503 rather than running unprotected. A claim the client was told failed can never commit afterwards: in lease mode the server cancels a claim that runs past statement_timeout, and the claim carries a deadline on the database clock (learned from the database's own readings and counted on the app's monotonic clock, so a step of the app's wall clock cannot move it), so one the network delivers late takes nothing; in transactional mode nothing is durable before COMMIT, which is sent only after every answer arrived.`,
  reclaim:
    "An expired lease is reclaimed inside the claim statement itself: the same INSERT … ON CONFLICT DO UPDATE takes over the row only WHERE status = 'PROCESSING' AND locked_until <= now(), and increments fencing_token. Completion and release are conditioned on the fencing token, so the old owner's late write matches no row and is rejected.",
  clock:
    "Every timestamp (locked_until, expires_at, created_at, completed_at) is computed by the database with now(); the application never sends one, so instance clock skew cannot cause a false reclaim.",
  aba: "The reclaim checks status and lease expiry in the same statement that takes the row; two nodes cannot both reclaim, because the row lock serialises them and the second no longer sees an expired lease.",
  ...rowRecord((_table, highVolume) => [
    'Check autovacuum on the table (pg_stat_user_tables.last_autovacuum, n_dead_tup); after a large backlog, run VACUUM (ANALYZE) once.',
    highVolume
      ? 'If bloat persists at this volume, move to hash partitions on (scope, key) in a maintenance window; never to time partitions, which would break the one-row-per-key guarantee.'
      : 'Above 100,000 keys a day, tune autovacuum for the table before anything else; hash partitions on (scope, key) are the next step, never time partitions.',
  ]),
  failures: (b) => [
    NO_CONNECTION(b),
    {
      failure: `A claim statement slower than ${sec(b.statementTimeoutMs)} (server-side statement_timeout, a session parameter of the store's connections), or a duplicate's row locked longer than ${sec(b.lockTimeoutMs)} (lock_timeout)`,
      answer: '503 "not processed" for a time-out; 409 + Retry-After for the locked duplicate',
      duplicate: 'the locked duplicate',
      why: 'A lease-mode claim is one autocommit statement: the server cancels it at the time-out, and it carries a deadline on the database clock, so a claim the network delivers late takes nothing. A transactional claim becomes durable only at COMMIT, which is sent after every answer arrived; on a time-out its connection is rolled back or destroyed. Either way a claim the client was told failed can never commit later. The client waits at most one second longer than the server for an answer.',
    },
  ],
};

const MYSQL: StoreFacts = {
  kind: 'relational',
  claimPrimitive: 'In one transaction: INSERT … ON DUPLICATE KEY UPDATE scope = scope (inserts a new key; on an existing one it changes nothing but takes the row lock), SELECT … FOR UPDATE to read the row back, and only for an expired key or a lapsed lease of the same request a conditional UPDATE with a new fencing token',
  claimShort: "one INSERT … ON DUPLICATE KEY UPDATE on the primary key, which takes the key's row lock before anything is decided",
  leaseClock:
    "every lease comparison uses the database's UTC_TIMESTAMP(3); the application never sends a timestamp.",
  claimIn: 'with one short transaction (INSERT … ON DUPLICATE KEY UPDATE, then SELECT … FOR UPDATE)',
  codeNames: ['INSERT INTO', 'ON DUPLICATE KEY UPDATE scope = scope', 'FOR UPDATE', 'START TRANSACTION', 'COMMIT', 'ROLLBACK', 'innodb_lock_wait_timeout', 'connectTimeout'],
  transactional: true,
  duplicateWaitsOn: "the key's row lock",
  roundTrips: (where, label) =>
    `Each round trip to ${label} is ${where}. Every request runs the same claim, in lease and transactional mode alike: the store sets innodb_lock_wait_timeout for the session, sends START TRANSACTION and INSERT … ON DUPLICATE KEY UPDATE (which inserts a new key, or on an existing one changes nothing but takes its row lock), sets the lock wait back to the server default, and reads the row with SELECT … FOR UPDATE; an expired key or a lapsed lease of the same request costs one more conditional UPDATE. MySQL has no RETURNING, so a new key and a duplicate of a finished or running request (answered from that read, with nothing changed) cost the same: in lease mode six round trips (SET, START TRANSACTION, INSERT, SET, SELECT, COMMIT). In transactional mode the transaction stays open on that connection: the action's writes and the completion share a single COMMIT, and a duplicate ends it with ROLLBACK instead. A concurrent duplicate of a running request waits on the key's row lock at the INSERT, then reads the committed result (replay), or gets 409 once the lock wait runs out.`,
  detectionSummary:
    `every claim is one transaction, in lease and transactional mode alike: INSERT … ON DUPLICATE KEY UPDATE takes the key's row lock, SELECT … FOR UPDATE reads the row back and answers a duplicate of a finished or running request with nothing changed; lease mode commits at once (six round trips for a new key or a replay), transactional mode keeps the transaction open for the action's writes and one COMMIT`,
  detectionTimeouts: (b) => `store time-outs ${sec(b.acquireTimeoutMs)} to get a connection, ${sec(b.statementTimeoutMs)} per statement (on the client), ${sec(lockSeconds(b.lockTimeoutMs) * 1_000)} row-lock wait (innodb_lock_wait_timeout)`,
  bounds: (b) =>
    `Every store call is bounded twice, on the client: at most ${sec(b.acquireTimeoutMs)} to get a pooled connection and at most ${sec(b.statementTimeoutMs)} per statement. mysql2 sends no statement time-out the server enforces, so the store races each statement against a timer and destroys a connection that overruns it; the server then rolls back that connection's open transaction. A claim waiting on a concurrent duplicate's row lock is bounded by the server: innodb_lock_wait_timeout, set to ${sec(lockSeconds(b.lockTimeoutMs) * 1_000)} (whole seconds) for that statement only, after which the duplicate gets 409. Past that the request fails closed with 503 rather than running unprotected. A claim is durable only at its COMMIT; if the COMMIT went out and its answer was lost, the claim may stand, but no action ran, so "not processed" is still true and the retry takes the key over once the lease lapses.`,
  reclaim:
    "An expired record or a lapsed lease is taken over inside the claim's transaction: once INSERT … ON DUPLICATE KEY UPDATE has locked the row and SELECT … FOR UPDATE has read it, an UPDATE re-checks WHERE expires_at <= UTC_TIMESTAMP(3) OR (status = 'PROCESSING' AND locked_until <= UTC_TIMESTAMP(3) for the same fingerprint) and writes a new fencing_token. Completion and release are conditioned on the fencing token, so the old owner's late write matches no row and is rejected.",
  clock:
    "Every timestamp (locked_until, expires_at, created_at, completed_at) is computed by the database with UTC_TIMESTAMP(3); the application's clock never supplies one (a takeover writes back the created_at the claim's locked read took from the server), so instance clock skew cannot cause a false reclaim.",
  aba: "The takeover runs under the row lock the claim's INSERT took and re-checks status and lease expiry in its WHERE; two nodes cannot both reclaim, because the second waits for the first one's transaction and then no longer sees a lapsed lease.",
  ...rowRecord((table, highVolume) => [
    `InnoDB reuses the pages that deleted rows free but does not shrink the table; after a large backlog, run OPTIMIZE TABLE ${table} once in a quiet hour (it rebuilds the table and its index statistics).`,
    `${highVolume ? 'If the table still grows at this volume, KEY partitions' : 'Above 100,000 keys a day, KEY partitions'} on (scope, key) are the next step, never time partitions: the server requires every partitioning column in the primary key, so a date column would make a retry after a partition boundary a second row.`,
  ]),
  failures: (b) => [
    NO_CONNECTION(b),
    {
      failure: `A store statement slower than ${sec(b.statementTimeoutMs)} (the store's own timer: mysql2 has no server-side statement time-out), or a duplicate's row locked longer than ${sec(lockSeconds(b.lockTimeoutMs) * 1_000)} (innodb_lock_wait_timeout)`,
      answer: '503 "not processed" for a time-out; 409 + Retry-After for the locked duplicate',
      duplicate: 'the locked duplicate',
      why: 'The claim runs in a transaction that becomes durable only at COMMIT; a statement that overruns has its connection destroyed, and the server rolls the transaction back. If the COMMIT itself went out and its answer was lost, the claim may stand, but no action ran, so "not processed" is still true and the retry takes the key over once its lease lapses. A transactional action\'s writes commit only together with its completion.',
    },
  ],
};

const SQLITE: StoreFacts = {
  kind: 'relational',
  claimPrimitive: "BEGIN IMMEDIATE (SQLite's single write lock), a SELECT of the key, then a plain INSERT for a new key or a takeover UPDATE with a new fencing token for an expired key or a lapsed lease of the same request, all synchronously under the lock",
  claimShort: "a read and an INSERT under BEGIN IMMEDIATE, SQLite's single write lock",
  leaseClock:
    "every lease comparison uses SQLite's julianday('now') on the machine that holds the database file; the application never sends a timestamp.",
  claimIn: "in one write transaction under SQLite's single write lock",
  codeNames: ['BEGIN IMMEDIATE', 'INSERT INTO', 'COMMIT', 'busy_timeout = 0', 'journal_mode = WAL'],
  transactional: true,
  duplicateWaitsOn: "SQLite's write lock",
  roundTrips: () =>
    "The store is a file opened in this process (better-sqlite3), so a claim costs no network round trip. Every claim, in lease and transactional mode alike, takes SQLite's single write lock with BEGIN IMMEDIATE, reads the key and inserts a new key (or takes over an expired key or a lapsed lease of the same request), synchronously, with nothing else running in between; a duplicate of a finished or running request is answered from that read with nothing written. In lease mode COMMIT follows at once. In transactional mode the transaction stays open on a connection of its own for the action's writes and the completion, which share a single COMMIT; meanwhile every other writer waits for the lock, and a duplicate of it from this process is answered at once as in flight.",
  detectionSummary:
    `every claim runs under BEGIN IMMEDIATE (SQLite's single write lock), in-process with no network round trip: a read of the key answers a duplicate of a finished or running request, otherwise a plain INSERT claims it; lease mode commits at once, transactional mode keeps the transaction open for the action's writes and one COMMIT`,
  detectionTimeouts: (b) => `the wait for the write lock is at most ${sec(b.storeTimeoutMs)}`,
  bounds: (b) =>
    `SQLite statements run synchronously in this process, so there is no connection to wait for and no statement time-out; what is bounded is the wait for the write lock. busy_timeout is 0 (better-sqlite3 would otherwise wait synchronously and block the event loop), and the store retries BEGIN IMMEDIATE asynchronously for at most ${sec(b.storeTimeoutMs)}; past that the request fails closed with 503 rather than running unprotected. A claim the client was told failed can never commit afterwards: a claim that did not get the lock wrote nothing, and one that did commits before the store answers.`,
  reclaim:
    "An expired record or a lapsed lease is taken over inside the claim's BEGIN IMMEDIATE transaction: the read finds it expired, or PROCESSING with locked_until in the past for the same fingerprint, and an UPDATE writes a new fencing_token. Completion and release are conditioned on the fencing token, so the old owner's late write matches no row and is rejected.",
  clock:
    "Every timestamp (locked_until, expires_at, created_at, completed_at) is computed by SQLite from julianday('now'); the application's clock never supplies one (created_at is read from SQLite once per claim and written in the same transaction). Every process that opens the database file runs on the machine that holds it, so they share one clock.",
  aba: "SQLite has one writer: the read and the takeover run under BEGIN IMMEDIATE's write lock with nothing in between, so two processes cannot both reclaim; the second one finds the first one's new lease.",
  ...rowRecord((_table, highVolume) => [
    'SQLite reuses the pages that deleted rows free but never shrinks the file; after a large backlog, run VACUUM once in a quiet hour (it rewrites the database file under the write lock, so claims wait meanwhile).',
    `SQLite has no partitions and one writer at a time: ${atVolume(highVolume)}, if claims start waiting on the write lock, move the store to a server database rather than splitting the file.`,
  ]),
  failures: (b) => [
    {
      failure: `The write lock held by another transaction (a transactional request, another process) for longer than ${sec(b.storeTimeoutMs)}`,
      answer: '503 "not processed", Retry-After; 409 + Retry-After for a duplicate of a transactional claim open in this process',
      duplicate: 'a duplicate of a transactional claim open in this process',
      why: 'BEGIN IMMEDIATE never got the lock, so nothing was written; a claim that gets it runs and commits synchronously before the store answers, so a claim the client was told failed can never commit later.',
    },
  ],
};

const LIBSQL: StoreFacts = {
  kind: 'relational',
  claimPrimitive: "one write batch (BEGIN IMMEDIATE … COMMIT in one round trip, under the database's single write lock): a SELECT of the key, then INSERT … ON CONFLICT (scope, key) DO UPDATE … WHERE the existing row is expired or its lease has lapsed for the same request, RETURNING the new fencing token only when the key was taken",
  claimShort: "one write batch whose INSERT … ON CONFLICT on the primary key takes the key only where it is new, expired or its lease lapsed",
  leaseClock:
    "every lease comparison uses the database's julianday('now'), on the libSQL server's clock; the application never sends a timestamp.",
  claimIn: 'with one write batch (one round trip)',
  codeNames: ["batch(batch, 'write')", 'INSERT INTO', 'ON CONFLICT (scope, key) DO UPDATE', 'RETURNING', "julianday('now')"],
  transactional: false,
  leaseOnly:
    "the libSQL store keeps no transaction open across the handler, since one would hold the database's single write lock for the handler's whole run, over the network, and stall every other write meanwhile",
  testTarget:
    'a real libSQL database: a throwaway local file opened through @libsql/client, the same engine, client and statements a remote Turso database gets',
  roundTrips: (where, label) =>
    `A claim is one round trip to ${label}, ${where}: one write batch, which the server runs as one transaction under the database's single write lock. It reads the key, then runs INSERT … ON CONFLICT … DO UPDATE, which inserts a new key, or takes over an expired key or a lapsed lease of the same request with a new fencing token, and otherwise changes nothing; a duplicate of a finished or running request is answered from the read in that same round trip. A new key and a replay cost that one round trip (the first claim of a process adds one read of the database clock). libSQL offers interactive transactions, but one shared with the action's writes would hold the database's one write lock across the handler, over the network, and stall every other write meanwhile, so the store keeps none open and every action runs in lease mode.`,
  detectionSummary:
    'lease mode only: the claim is one write batch (one round trip) that reads the key, answers a duplicate of a finished or running request from it, and otherwise claims the new key with INSERT … ON CONFLICT … DO UPDATE, for a new key and a replay alike',
  detectionTimeouts: (b) => `store time-out ${sec(b.storeTimeoutMs)} per call (on the client)`,
  bounds: (b) =>
    `Every store call is one round trip bounded on the client: the store waits at most ${sec(b.storeTimeoutMs)} for its answer (@libsql/client puts no time-out on a request of its own), and a local file's write lock is waited for asynchronously within the same bound. Past that the request fails closed with 503 rather than running unprotected. A claim the client was told failed takes nothing afterwards: the claim carries a deadline on the database clock (learned from the database's own readings and counted on the app's monotonic clock), past which its INSERT inserts nothing, and a claim whose answer arrives after the store gave up is released at once, fenced by its token.`,
  reclaim:
    "An expired record or a lapsed lease is taken over inside the claim's write batch: the INSERT … ON CONFLICT DO UPDATE takes the row only WHERE expires_at has passed, or status = 'PROCESSING' AND locked_until has passed for the same fingerprint, and writes the claim's new fencing_token. Completion and release are conditioned on the fencing token, so the old owner's late write matches no row and is rejected.",
  clock:
    "Every timestamp (locked_until, expires_at, created_at, completed_at) is computed by the database from julianday('now') inside the statement that writes it; the application never sends one. Every instance of the app reaches the same libSQL server, so every lease is measured on that server's clock, and instance clock skew cannot cause a false reclaim.",
  aba: "The takeover's conditions are checked in the same statement that takes the row, inside a write batch that holds the database's single write lock: two nodes cannot both reclaim, because the second batch runs after the first and no longer sees a lapsed lease.",
  ...rowRecord((_table, highVolume) => [
    'libSQL reuses the pages that deleted rows free, so the database stops growing once the cleanup keeps up, but it does not shrink by itself after a large backlog.',
    `libSQL has no partitions and one writer at a time per database: ${atVolume(highVolume)}, if claims start waiting on the write lock (claim latency climbs with traffic), give the store a database of its own, apart from the app's tables.`,
  ]),
  failures: (b) => [
    {
      failure: `The libSQL server unreachable, or a store call unanswered after ${sec(b.storeTimeoutMs)} (the store's own timer)`,
      answer: '503 problem "not processed", Retry-After',
      why: 'No action ran. A claim that reaches the server after its deadline inserts nothing; one that ran but was answered after the store gave up is released at once, fenced by its token, so the retry is not held off for a lease.',
    },
  ],
};

const REDIS: StoreFacts = {
  kind: 'key-value',
  claimPrimitive: "One Lua script (EVALSHA), atomic on the server: where no record exists it creates the record hash and sets the lease key with SET … PX (the lease expires on the Redis clock); a lapsed lease of the same request is taken over with a new fencing token. Completion, release, lease extension and saga steps are scripts that compare the fencing token first",
  claimShort: "one Lua script that creates the record only where none exists",
  leaseClock:
    "every lease is an expiry on the Redis server's clock (SET … PX); the application never sends a timestamp.",
  uniqueness:
    "Redis enforces uniqueness in the claim script, which creates the record for (scope, key) only where none exists",
  schemaIntro:
    "Redis has no schema: the claim script below is what makes a second claim of a live key impossible. It runs atomically on the server, creates the record only where none exists, and gives the lease its expiry on the server clock.",
  selfCleaning:
    "Redis deletes each record itself, so there is no cleanup job: the claim gives a new record an expiry of at least its lease, and the completion script below sets it to the retention once the response is stored.",
  noConstraints: 'Redis has no DDL, so no PRIMARY KEY or CHECK constraint: the record is a hash and its lease a key of its own.',
  stateGuard:
    'after the claim, a record changes only inside the completion, release, lease-extension and saga-step scripts, each of which compares the fencing token first',
  claimIn: 'with one atomic Lua script',
  codeNames: ['EVALSHA', "'PX'", 'PEXPIRE', 'commandTimeout', 'connectTimeout'],
  transactional: false,
  roundTrips: (where, label) =>
    `A claim is one round trip to ${label}, ${where}: one Lua script, run atomically on the server, that reads the record and either creates it with a lease key (SET … PX) or, for a lapsed lease of the same request, takes it over with a new fencing token; a duplicate of a finished or running request is answered by the same script, which then changes nothing. A new key and a replay cost that single round trip (two the first time a process runs the script, when EVALSHA answers NOSCRIPT and the store sends EVAL). Redis has no transaction that could include the action's own writes, so every action runs in lease mode. Retention is the record's TTL (PEXPIRE), so there is no cleanup job.`,
  detectionSummary:
    `lease mode only: the claim is one Lua script (EVALSHA) that answers a duplicate of a finished or running request and otherwise creates the record and its lease key (SET … PX) in the same round trip, for a new key and a replay alike`,
  detectionTimeouts: (b) => `store time-outs ${sec(b.acquireTimeoutMs)} to connect, ${sec(b.storeTimeoutMs)} per command (on the client)`,
  bounds: (b) =>
    `Every store call is bounded on the client: the connection opens within ${sec(b.acquireTimeoutMs)} (connectTimeout), and each script gets at most ${sec(b.storeTimeoutMs)} (the store's own timer; ioredis commandTimeout ${sec(b.statementTimeoutMs)} as well). Redis enforces no time-out a command can carry. Past that the request fails closed with 503 rather than running unprotected. A claim the store gave up on may still run on the server after the timer fired; the store then sends a release fenced by that claim's token, so the key is not held for a lease, and "not processed" stays true because no action ran.`,
  reclaim:
    "A lapsed lease is reclaimed inside the claim script itself: the lease is a key of its own set with SET … PX, so once it has expired on the Redis clock the script finds the record PROCESSING without a lease key and, for the same request, writes a new fencing token and a new lease. An expired record is gone with its TTL, so its key is claimed as new. Completion, release and lease extension are scripts that compare the fencing token first, so the old owner's late write changes nothing.",
  clock:
    "Leases and retention are expiries on the Redis server's clock (SET … PX, PEXPIRE); the application never sends a timestamp, so instance clock skew cannot cause a false reclaim.",
  aba: "The claim script runs atomically: Redis runs one script at a time, so two nodes cannot both reclaim; the second one finds the first one's live lease key.",
  expiryCheck: 'Redis removes each record at the end of its retention; check maxmemory-policy is noeviction so none goes earlier.',
  provision: () => ({
    title: 'Prepare Redis',
    detail: 'Nothing to migrate: records are hashes created by their first claim. Run Redis with maxmemory-policy noeviction and persistence (AOF).',
    safety: 'Nothing reads the keys yet.',
  }),
  keyParts: "kept apart from it (the scope beside the key in the record's name, the action a field of the record's hash)",
  expiryField: "the record's TTL (PEXPIRE)",
  crashedLease: (leases) =>
    `the record stays PROCESSING while its lease key lives. Once the lease key expires on the Redis clock (${leases}), the next attempt's claim script takes the record over with a new fencing token and runs the action again.`,
  stuck: () => ({
    list: 'List the stuck records: hashes whose status is PROCESSING while their lease key has expired, oldest first (never by key from a log: logs hold only key hashes).',
    release: 'If the effect happened, complete the record by hand with the real response; if not, release it (delete the record hash only while its token is still the one you read, so a worker that came back is not overruled) and the next retry runs.',
  }),
  maintenance: (_table, highVolume) => ({
    symptom: 'store_size keeps growing although traffic is flat, or Redis memory (used_memory) climbs toward maxmemory.',
    steps: [
      "Check that records carry their expiry: PTTL on a record's hash answers the milliseconds it has left, and -1 marks a record without one (written outside the store), which never goes.",
      'Check that maxmemory-policy is noeviction and used_memory stays well below maxmemory: at the limit Redis refuses new claims (nothing runs) instead of evicting records, whose keys would then run again.',
      `Redis has no table to vacuum or partition: a record's keys share one hash tag, so in Redis Cluster each record stays in one slot and records spread over the shards by key. ${atVolume(highVolume, true)}, size memory for one retention window of records and add shards rather than shorten the retention.`,
    ],
  }),
  failures: (b) => [UNREACHABLE(b, 'Redis', 'a script', 'A claim script that still runs', 'fenced by its token')],
};

const DYNAMODB: StoreFacts = {
  kind: 'key-value',
  claimPrimitive: 'PutItem with ConditionExpression attribute_not_exists(pk) OR (expiresAt < :now AND leaseUntil < :now) and ReturnValuesOnConditionCheckFailure ALL_OLD, so a duplicate comes back with the failed condition; a lapsed lease of the same request is taken over by an UpdateItem conditional on the old fencing token. The times compared are the application server\'s clock: DynamoDB has no server clock a condition can read',
  claimShort: "one conditional PutItem on attribute_not_exists(pk)",
  leaseClock:
    "the DynamoDB store cannot avoid it: DynamoDB has no server clock a condition can read, so leases are compared with the application servers' clocks. Keep them synchronised (NTP) and leases well above their drift.",
  uniqueness:
    "DynamoDB enforces uniqueness with the claim's conditional PutItem, attribute_not_exists(pk) on the partition key pk that holds (scope, key)",
  schemaIntro:
    "DynamoDB has no schema beyond the table's partition key pk and its ttl attribute (below): the claim's conditional PutItem is what makes a second claim of a live key impossible. It creates the record only where none exists or the old one is past both its retention and its lease, and DynamoDB TTL deletes a record some time after its ttl.",
  selfCleaning:
    "DynamoDB deletes each record itself, so there is no cleanup job: the claim writes a ttl of at least its lease and its retention, the completion sets it to the retention, and DynamoDB TTL deletes the record some time after that (TTL is lazy, so reads treat a record past its retention as gone).",
  noConstraints: "DynamoDB has no DDL beyond the table's partition key pk (one item per scope and key), so no CHECK constraint.",
  stateGuard:
    'after the claim, every write to a record is an UpdateItem conditional on its fencing token',
  claimIn: 'with one conditional PutItem',
  codeNames: ['PutCommand', 'attribute_not_exists(pk)', 'ReturnValuesOnConditionCheckFailure', 'UpdateCommand', 'abortSignal', 'maxAttempts: 1', 'connectionTimeout', 'ttl'],
  transactional: false,
  roundTrips: (where, label) =>
    `A claim is one request to ${label}, ${where}: a conditional PutItem that creates the record only where none exists, or where the old one is past both its retention and its lease. When the condition fails DynamoDB returns the existing item with the error (ReturnValuesOnConditionCheckFailure ALL_OLD), so a duplicate of a finished or running request is answered in that same round trip with nothing written. A new key and a replay cost one request each; a lapsed lease of the same request costs a second, an UpdateItem conditional on the old fencing token. DynamoDB has no transaction that could include the action's own writes, so every action runs in lease mode. Leases and expiry are compared with the application server's clock, so keep the servers' clocks synchronised (NTP) and leases well above their drift. Retention is the ttl attribute (DynamoDB TTL deletes lazily; reads treat a record past its retention as gone), so there is no cleanup job.`,
  detectionSummary:
    `lease mode only: the claim is one conditional PutItem that creates the record or, when its condition fails, returns the existing item (ReturnValuesOnConditionCheckFailure ALL_OLD) to answer the duplicate in the same round trip, for a new key and a replay alike`,
  detectionTimeouts: (b) => `store time-outs ${sec(b.acquireTimeoutMs)} to connect, ${sec(b.storeTimeoutMs)} per request (on the client, one attempt)`,
  bounds: (b) =>
    `Every store call is one HTTP request with a single attempt (maxAttempts 1): the connection opens within ${sec(b.acquireTimeoutMs)} (connectionTimeout), and the store aborts a request that has not answered within ${sec(b.storeTimeoutMs)} (an AbortSignal). DynamoDB enforces no time-out a request can carry. Past that the request fails closed with 503 rather than running unprotected. A claim the store gave up on may still land; the store then sends a release conditional on that claim's token, so the key is not held for a lease, and "not processed" stays true because no action ran.`,
  reclaim:
    "A lapsed lease is reclaimed by an UpdateItem conditional on the old fencing token and leaseUntil < now; an expired record is overwritten by the claim's PutItem itself, whose condition admits a record past both its retention and its lease. Completion, release and lease extension are conditional on the fencing token, so the old owner's late write fails its condition and is rejected.",
  clock:
    "DynamoDB has no server clock a condition can read: leaseUntil and expiresAt are written and compared in epoch milliseconds from the application server's clock, so instance clock skew moves leases. Keep the servers' clocks synchronised (NTP) and leases well above their drift.",
  aba: "The takeover's condition names the old fencing token: two nodes cannot both reclaim, because the first one's write replaces the token and the second one's condition then fails.",
  expiryCheck: 'DynamoDB TTL deletes each record some time after its ttl; check that TTL is enabled on the ttl attribute (dynamodb-table.yml turns it on).',
  provision: (table) => ({
    title: `Create ${table}`,
    detail: 'Deploy dynamodb-table.yml (CloudFormation: the table keyed by pk, TTL on ttl), or create it with tableDefinition() from table.ts.',
    safety: 'A new table; nothing reads it yet.',
  }),
  keyParts: 'kept apart from it (the scope beside the key in the partition key pk, the action an attribute of its own)',
  expiryField: 'an attribute (expiresAt, with ttl for DynamoDB TTL)',
  crashedLease: (leases) =>
    `the item stays PROCESSING with its lease in leaseUntil. Once the lease lapses (${leases}), the next attempt takes it over with an UpdateItem conditional on the old fencing token, which writes a new token, and runs the action again.`,
  stuck: (table) => ({
    list: `List the stuck items: items of ${table} whose status is PROCESSING and whose leaseUntil (epoch milliseconds) lies more than a minute in the past, oldest first (a Scan with that filter; never by key from a log: logs hold only key hashes).`,
    release: 'If the effect happened, complete the record by hand with the real response; if not, release it so the next retry runs: delete the item by its pk on the condition that status is PROCESSING and token is the one you read, so a worker that came back is not overruled.',
  }),
  maintenance: (table, highVolume) => ({
    symptom: 'store_size keeps growing although traffic is flat, or store errors rise with throttled requests.',
    steps: [
      `Check that TTL is enabled on the ttl attribute (DescribeTimeToLive on ${table} answers ENABLED; dynamodb-table.yml turns it on): without it no record is ever deleted. TTL deletes lazily, within days, and reads treat a record past its expiresAt as gone, so a backlog of expired items costs storage, not correctness.`,
      'There is nothing to vacuum or partition by hand: DynamoDB spreads the table over partitions by pk (one item per scope and key), and each claim touches one item.',
      `${atVolume(highVolume, true)}, watch the table's throttled requests: dynamodb-table.yml bills on demand (PAY_PER_REQUEST), so throttling comes from an account limit or provisioned capacity set later, and a throttled claim fails closed (nothing runs).`,
    ],
  }),
  failures: (b) => [UNREACHABLE(b, 'DynamoDB', 'a request', 'A PutItem that still lands', 'conditional on its token')],
};

/** No store module of its own: the document shows code sketches, so these are what the sketches must do. */
const MONGODB: StoreFacts = {
  kind: 'document',
  claimPrimitive: 'findOneAndUpdate with upsert on a unique index over {scope, key}, the takeover conditions in the filter',
  claimShort: "one findOneAndUpdate with upsert on the unique index over {scope, key}",
  leaseClock:
    "every lease comparison must use the server's clock ($$NOW); the application never sends a timestamp.",
  claimIn: 'with one atomic findOneAndUpdate',
  codeNames: [],
  transactional: true,
  duplicateWaitsOn: "the key's unique index",
  roundTrips: (where, label) =>
    `A claim is one findOneAndUpdate on ${label}, ${where}: an upsert on the unique index over {scope, key} whose filter holds the takeover conditions, so a new key is claimed and a duplicate of a finished or running request is read in that same round trip.`,
  detectionSummary:
    `the claim is one findOneAndUpdate with upsert, for a new key and a replay alike`,
  detectionTimeouts: (b) => `bound every call at ${sec(b.storeTimeoutMs)}`,
  bounds: (b) =>
    `Bound every store call: at most ${sec(b.acquireTimeoutMs)} to get a connection and ${sec(b.statementTimeoutMs)} per operation (maxTimeMS on the server). Past that the request fails closed with 503 rather than running unprotected.`,
  reclaim:
    "An expired lease is reclaimed inside the claim itself: the findOneAndUpdate filter matches the record only when it is expired or PROCESSING with a lapsed lease, and the update writes a new fencing token. Completion and release filter on the fencing token, so the old owner's late write matches no document.",
  clock:
    "Compute every timestamp on the server ($$NOW in an update pipeline), never from the application, so instance clock skew cannot cause a false reclaim.",
  aba: "The filter checks status and lease expiry in the same operation that takes the document; two nodes cannot both reclaim, because single-document writes are atomic and the second one no longer matches.",
  ...rowRecord((_table, highVolume) => [
    'Check that the unique index on {scope, key} is in place (getIndexes()); after a large backlog, run compact on the collection once in a quiet hour.',
    `${atVolume(highVolume, true)}, shard the collection on { scope, key }, the unique index's own fields; never on a time field, which would break the one-record-per-key guarantee.`,
  ]),
  keyParts: 'stored in their own fields',
  expiryField: 'a field of the record (expires_at)',
  failures: (b) => [
    NO_CONNECTION(b),
    {
      failure: `A claim slower than ${sec(b.statementTimeoutMs)} (maxTimeMS)`,
      answer: '503 "not processed"',
      why: 'The server aborts the operation at maxTimeMS, so no action ran.',
    },
  ],
};

/** One entry per database the configuration can name; "unknown" designs use the PostgreSQL reference. */
export const STORE_FACTS: Record<Database, StoreFacts> = {
  postgres: POSTGRES,
  mysql: MYSQL,
  mariadb: MYSQL,
  sqlite: SQLITE,
  libsql: LIBSQL,
  mongodb: MONGODB,
  dynamodb: DYNAMODB,
  redis: REDIS,
  unknown: POSTGRES,
};
