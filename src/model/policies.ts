import type { Config } from '../config/schema.js';
import { describeDuration } from '../config/duration.js';
import type { ActionDesign, CleanupPolicy, FingerprintPolicy, KeyPolicy, LockPolicy, ResponsePolicy, StackDesign, StorageDesign } from './types.js';
import { LEASE_SAFETY_FACTOR, SKEW_BUFFER_MS, DEFAULT_DURATION_MS } from './timing.js';
import { STORE_FACTS } from './storeFacts.js';
import { workerContested, workerKinds, workerRules, workerValidation, type WorkerKinds } from './workerOutcomes.js';
import { andList } from './labels.js';

export const FINGERPRINT_ALGORITHM_ID = 'sha256-canonical-json-v1';
export const PROBLEM_TYPE_BASE = 'https://idempotency-builder.dev/problems/';

/**
 * The key grammar, one definition for the generated code (POLICY.keyPattern) and the document: printable ASCII
 * without whitespace, comma or double quote. Length is checked separately (maxLength) after one pair of
 * surrounding double quotes is removed; a quote left inside would be a malformed structured-field string.
 */
export const KEY_PATTERN = '^[\\x21\\x23-\\x2B\\x2D-\\x7E]+$';
export const KEY_CHARSET = 'printable ASCII without whitespace, comma or double quote (0x21–0x7E except 0x22 and 0x2C)';

/** 1048576 → "1 MiB", 65536 → "64 KiB", 5000 → "5000 bytes": exact, as the code compares bytes. */
export function describeBytes(bytes: number): string {
  if (bytes % 1_048_576 === 0) return `${bytes / 1_048_576} MiB`;
  if (bytes % 1_024 === 0) return `${bytes / 1_024} KiB`;
  return `${bytes} bytes`;
}

/** What plain.ts checks before the store (InvalidKeyError, PrincipalMissingError): it reads a key, not a header. */
const PLAIN_VALIDATION = [
  'Required on every protected call: the wrapper throws InvalidKeyError (reason "missing") when the call passes no key, or, for a key derived from fields, when one of them is absent; the function never runs unprotected.',
  'One to 255 characters, counted after unquoting; a longer key throws InvalidKeyError with reason "too-long", an empty one "empty".',
  'Printable ASCII without whitespace, commas or double quotes (0x21–0x7E except 0x22 and 0x2C): spaces, commas, control characters and non-ASCII throw InvalidKeyError with reason "invalid".',
  'One optional pair of surrounding double quotes (the IETF draft\'s structured-field form, "…") is removed first, so a key read from an Idempotency-Key header can be passed as it came.',
  'A scoped action called with no principal (no scope in the call, and the principal resolver returns none) throws PrincipalMissingError before the store is touched.',
];

export function buildKeyPolicy(actions: readonly ActionDesign[], database?: StackDesign['storeDatabase'], plain = false, worker?: WorkerKinds): KeyPolicy {
  const uniqueness = database ? STORE_FACTS[database].uniqueness : undefined;
  const derived = actions.filter((a) => a.key.source === 'derived');
  const formPosted = actions.filter((a) => a.key.field !== undefined);
  const serverActions = actions.filter((a) => a.transport === 'server-action');
  const formGeneration = formPosted.length > 0 ? `${formPosted.map((a) => a.name).join(', ')} ${formPosted.length === 1 ? 'is' : 'are'} posted by server-rendered forms, which cannot set a header: each time the server renders such a form it mints a UUIDv4 (newIdempotencyKey(), a function in the views' locals) into a hidden ${formPosted[0]!.key.field} field, so a double click or a resubmitted page sends the same key and a page rendered again a new one. The middleware reads the field only when no Idempotency-Key header came; a script calling the route may still send the header.` : undefined;
  // When forms post every keyed action, no caller generates a key: the form paragraph is the whole answer.
  const onlyForms = formPosted.length > 0 && derived.length === 0 && actions.every((a) => a.key.field !== undefined || a.key.source === 'derived');
  return {
    header: 'Idempotency-Key',
    maxLength: 255,
    charset: KEY_CHARSET,
    charsetPattern: KEY_PATTERN,
    validation: [
      ...(worker
        ? workerValidation(worker)
        : plain
        ? PLAIN_VALIDATION
        : [
            'Required on every protected route; a missing key is 400, never a request that silently runs unprotected.',
            'One to 255 characters, counted after unquoting.',
            'Printable ASCII without whitespace, commas or double quotes (0x21–0x7E except 0x22 and 0x2C): empty keys, spaces, commas, control characters and non-ASCII are rejected with 400.',
            'One optional pair of surrounding double quotes (the IETF draft\'s structured-field form, Idempotency-Key: "…") is removed first.',
            'A header sent twice is rejected with 400, whether the framework hands it over as a list or joined into "a, b".',
            ...(formPosted.length > 0 ? [`The hidden ${formPosted[0]!.key.field} field of a server-rendered form is read only when no header came, under the same rules; a field sent twice is rejected with 400.`] : []),
            ...(serverActions.length > 0 ? [`A Server Action (${andList(serverActions.map((a) => a.name))}) has no header: its key is its first argument, checked by the same rules before the store is touched; idempotentAction throws InvalidKeyError for a missing or malformed key, and PrincipalMissingError when a per-user action runs with nobody signed in.`] : []),
          ]),
      uniqueness ? `${uniqueness}.` : 'Uniqueness is enforced by the database: PRIMARY KEY on (scope, key).',
    ],
    generation: onlyForms
      ? formGeneration!
      : worker
      ? `No caller sends a key: ${[worker.consumers ? 'each consumer derives it from the message id the producer or broker sets' : '', worker.crons ? 'each cron job from its name and the slot it was scheduled for' : ''].filter(Boolean).join(', and ')}, so every redelivery${worker.crons ? ' and every fire of the same slot' : ''} produces the same key.`
      : derived.length > 0
        ? `HTTP callers generate a UUIDv4 once per intent and reuse it on every retry; ${andList(derived.map((a) => a.name))} ${derived.length === 1 ? 'derives' : 'derive'} the key on the server from fields that identify the event or job, so every redelivery produces the same key.`
        : 'Callers generate a UUIDv4 once per user intent (when the form is shown or the operation is first attempted) and reuse it on every retry.',
    ...(formGeneration && !onlyForms ? { formGeneration } : {}),
    timeVaryingWarning: `Nothing time-varying goes into a key: a retry that crosses a clock boundary (14:59 → 15:01) would get a new key and run again. Expiry is ${STORE_FACTS[database ?? 'postgres'].expiryField}, not part of the key. Scheduled jobs use the slot they were scheduled for, which is the same for every attempt at that slot.`,
  };
}

export function buildFingerprintPolicy(config: Config, plain = false, worker?: WorkerKinds): FingerprintPolicy {
  // handler.ts hashes { action, key } and guard.ts { job, slot }: the key is the intent, so a mismatch cannot arise.
  const workerHash = worker ? [worker.consumers ? '{ action, key } for a consumer message' : '', worker.crons ? '{ job, slot } for a cron job' : ''].filter(Boolean).join(' and ') : '';
  return {
    algorithmId: FINGERPRINT_ALGORITHM_ID,
    algorithm: 'SHA-256',
    encoding: 'lowercase hex (64 characters)',
    canonicalization: worker
      ? `JSON of ${workerHash}, object keys sorted, no insignificant whitespace. The significant fields below describe what each message or run means; the generated code does not hash them, because its key already names the intent.`
      : 'JSON of { method, route template, fields } where fields holds only the significant fields, object keys sorted recursively, no insignificant whitespace; a missing field is encoded as null so "absent" and "null" mean the same intent.',
    comparison: 'crypto.timingSafeEqual on the two 32-byte digests.',
    alwaysExcluded: [
      { field: 'the idempotency key', reason: 'it identifies the record, not the intent' },
      { field: 'authentication', reason: 'identity is the scope of the record' },
      { field: 'tracing and request ids', reason: 'new on every attempt' },
    ],
    mismatchStatus: config.conflictStatus,
    mismatchBody: worker
      ? `there is none to detect: the fingerprint is derived from the key itself, so a second message with the same id (or a second fire of the same slot) always matches and is a duplicate: acknowledged without running, whatever its payload. conflictStatus does not apply: nothing here answers HTTP.`
      : plain
      ? 'the wrapper throws MismatchError (from core.ts): it carries only its message, "idempotency key reused with a different request", and nothing from the stored call or result; the function does not run. conflictStatus does not apply: the wrapper answers no HTTP, so your resolver or procedure decides what the caller sees.'
      : 'application/problem+json with type …/idempotency-key-mismatch, a title, and a detail saying the key was already used with different parameters; nothing from the stored request or response.',
  };
}

export function buildLockPolicy(config: Config, stack: StackDesign, actions: readonly ActionDesign[]): LockPolicy {
  const skew = SKEW_BUFFER_MS[config.concurrency];
  const facts = STORE_FACTS[stack.storeDatabase];
  const leases = actions.map((a) => `${a.name} ${describeDuration(a.lockTimeoutMs)}${a.heartbeatMs ? ` (heartbeat every ${describeDuration(a.heartbeatMs)})` : ''}`);
  // The same numbers buildResponsePolicy hands the code (POLICY.inFlightWaitMs, POLICY.retryAfterSeconds).
  const shortest = Math.min(...actions.map((a) => a.lockTimeoutMs));
  const retryCap = Math.max(1, Math.ceil(shortest / 1_000));
  const plainContested =
    config.inFlight === 'wait'
      ? `A duplicate of a call still running polls the record for up to ${describeDuration(Math.min(2_000, shortest))} for the first one to finish and then returns its stored result; if it is still running after the wait the wrapper throws InFlightError, whose retryAfterSeconds is the time left on the lease (at least 1 second, at most ${retryCap}).`
      : `A duplicate of a call still running makes the wrapper throw InFlightError at once; its retryAfterSeconds is the time left on the lease (at least 1 second, at most ${retryCap}), for the caller to pass on or to retry after. Waiting would tie up a connection and a worker for a result the caller can fetch by retrying.`;
  return {
    skewBufferMs: skew,
    safetyFactor: LEASE_SAFETY_FACTOR,
    defaultDurationMs: DEFAULT_DURATION_MS.http,
    claim: stack.claimPrimitive,
    contested: stack.worker
      ? workerContested(workerKinds(actions, stack.broker))
      : stack.plain
      ? plainContested
      : config.inFlight === 'wait'
        ? 'A duplicate of a request still running waits briefly (polling the record) for the first one to finish and then replays its response; if it is still running after the wait it gets 409 with Retry-After.'
        : 'A duplicate of a request still running gets 409 at once, with Retry-After set to the time left on the lease; waiting would tie up a connection and a worker for a response the client can fetch by retrying.',
    reclaim: facts.reclaim,
    clock: facts.clock,
    aba: facts.aba,
    summary: `Leases per action: ${leases.join('; ')}.`,
  };
}

export function buildResponsePolicy(config: Config, actions: readonly ActionDesign[], database?: StackDesign['storeDatabase'], plain = false, worker?: WorkerKinds): ResponsePolicy {
  // A lease-only store (Redis, DynamoDB) never runs an action in transactional mode.
  const transactional = database ? STORE_FACTS[database].transactional : true;
  const shortest = Math.min(...actions.map((a) => a.lockTimeoutMs));
  const mismatch = config.conflictStatus;
  return {
    mismatchStatus: mismatch,
    inFlightStatus: 409,
    inFlight: config.inFlight,
    inFlightWaitMs: config.inFlight === 'wait' ? Math.min(2_000, shortest) : 0,
    retryAfterSeconds: Math.max(1, Math.ceil(shortest / 1_000)),
    storeUnavailableStatus: 503,
    maxStoredResponseBytes: config.maxStoredResponseBytes,
    replayHeader: 'Idempotent-Replayed',
    problemType: PROBLEM_TYPE_BASE,
    replayedHeaders: ['content-type', 'location', 'cache-control', 'etag', 'last-modified'],
    rules: worker ? workerRules(worker, transactional) : plain ? plainRules(config, transactional, config.inFlight === 'wait') : [
      { situation: 'New key', response: 'Claim, run the action, store the response, then send it', stored: 'Yes, before sending' },
      { situation: 'Same key and fingerprint, completed', response: 'Replay status, allow-listed headers and exact body bytes, plus Idempotent-Replayed: true', stored: 'Already' },
      { situation: 'Same key, different fingerprint', response: `${mismatch} problem+json${mismatch === 422 ? ' (IETF draft; 409 selectable)' : ' (the original contract; 422 is the IETF draft\'s choice)'}`, stored: 'No' },
      { situation: 'Same key, still in flight', response: config.inFlight === 'wait' ? 'Wait briefly for the result, then 409 + Retry-After' : '409 + Retry-After', stored: 'No' },
      { situation: 'Lease expired (worker crashed)', response: 'Reclaim with a new fencing token and run', stored: 'When it completes' },
      { situation: 'Key missing or malformed', response: '400 problem+json', stored: 'No' },
      { situation: 'Action throws or returns 5xx', response: 'Release the claim; the error goes to the client; a retry runs again', stored: 'No' },
      { situation: 'Action returns a definitive 4xx (e.g. 402)', response: 'Stored and replayed like a success', stored: 'Yes' },
      { situation: '401, 403, 429 before the action', response: 'Produced before any claim', stored: 'Never' },
      { situation: 'Store unavailable or slow before the action', response: '503 + Retry-After, "not processed" (the claim never committed), fail closed', stored: 'No' },
      ...(transactional ? [{ situation: 'Completion cannot be recorded (transactional mode)', response: '503 "not processed": the claim and the action\'s writes were rolled back together; if the COMMIT\'s answer itself was lost, 503 "outcome unknown"', stored: 'No' }] : []),
      { situation: 'Completion cannot be recorded (lease mode)', response: 'Retried with the same fencing token, then 503 "outcome unknown, retry later with the same key"; the lease lapses and a retry re-runs with the same provider keys', stored: 'Not yet' },
      { situation: `Response body above ${describeBytes(config.maxStoredResponseBytes)}`, response: 'Sent once; a retry gets 409 response-not-replayable, never a second execution', stored: 'Status and SHA-256 only' },
      { situation: 'Method other than the action\'s', response: 'Passes through untouched', stored: 'No' },
      { situation: 'Key used by another principal', response: "Runs as this principal's own new key", stored: 'Under this principal' },
      { situation: 'Expired key', response: 'Treated as new', stored: 'Yes, fresh record' },
    ],
  };
}

/**
 * The response rules as the plain wrapper (plain.ts over core.ts runOnce) really behaves: it returns the result or
 * throws, so there is no status, header or byte to speak of, and no method to pass through.
 */
function plainRules(config: Config, transactional: boolean, wait: boolean): ResponsePolicy['rules'] {
  return [
    { situation: 'New key', response: 'Claim, run the function, store its result as JSON, then return that JSON form (the shape a repeat gets; a function that returns nothing gives null, first and on every repeat)', stored: 'Yes, before returning' },
    { situation: 'Same key and input, completed', response: 'Returns the stored JSON result without running the function; detailed() also says replayed: true', stored: 'Already' },
    { situation: 'Same key, different input', response: 'Throws MismatchError; nothing of the stored result', stored: 'No' },
    { situation: 'Same key, still running', response: wait ? 'Polls briefly for the result, then throws InFlightError carrying retryAfterSeconds' : 'Throws InFlightError carrying retryAfterSeconds (the time left on the lease)', stored: 'No' },
    { situation: 'Lease expired (worker crashed)', response: 'Reclaim with a new fencing token and run', stored: 'When it completes' },
    { situation: 'Key missing or malformed', response: 'Throws InvalidKeyError (reason missing, empty, too-long or invalid) before the store is touched', stored: 'No' },
    { situation: 'Scoped action without a principal', response: 'Throws PrincipalMissingError before the store is touched', stored: 'No' },
    { situation: 'The function throws', response: 'Release the claim and rethrow the same error; a retry runs again', stored: 'No' },
    { situation: 'A definitive failure (e.g. a declined card)', response: 'Stored only if the function returns it as a value; a thrown one is released and retried like any error', stored: 'Only when returned' },
    { situation: 'Store unavailable or slow before the function', response: 'Throws StoreUnavailableError naming the store operation, "not processed" (the claim never committed), fail closed; it carries no retry-after', stored: 'No' },
    ...(transactional ? [{ situation: 'Completion cannot be recorded (transactional mode)', response: 'Throws StoreUnavailableError, "not processed": the claim and the function\'s writes were rolled back together; if the COMMIT\'s answer itself was lost, the store\'s OutcomeUnknownError', stored: 'No' }] : []),
    { situation: 'Completion cannot be recorded (lease mode)', response: 'Retried with the same fencing token, then throws OutcomeUnknownError ("retry later with the same key"); the lease lapses and a retry re-runs with the same provider keys', stored: 'Not yet' },
    { situation: 'Completion after the lease was taken over', response: 'Throws LeaseLostError; the new owner\'s result stands', stored: 'No' },
    { situation: `Result above ${describeBytes(config.maxStoredResponseBytes)} as JSON`, response: 'Returned once; a repeat throws NotReplayableError, never a second execution', stored: 'A SHA-256 of the JSON, not the result' },
    { situation: 'Key used by another principal', response: "Runs as this principal's own new key", stored: 'Under this principal' },
    { situation: 'Expired key', response: 'Treated as new', stored: 'Yes, fresh record' },
  ];
}

/** Why a day-partitioned table breaks the guarantee, in the terms of the database that would refuse it. */
const timePartitionCaveat = (database: string, rule: string) =>
  `Time partitions (by day on created_at) are deliberately not used: ${database} requires ${rule}, so the primary key would become (scope, key, created_at) and a retry that lands after a partition boundary would be a second row, and a second execution.`;
const TIME_PARTITION_CAVEAT = timePartitionCaveat('PostgreSQL', 'the partition column in every unique constraint');

export function buildStorage(config: Config): StorageDesign {
  const volume = config.expectedVolumePerDay ?? 0;
  const highVolume = volume > 100_000;
  const perDay = volume > 0 ? `${volume.toLocaleString('en-US')} keys a day` : 'the expected volume';
  const { database } = config.stack;
  const mysql = database === 'mysql' || database === 'mariadb';
  // The tuning and the caveat are the cleanup job's database's own; stores that expire records show neither.
  const caveat =
    database === 'sqlite'
      ? 'SQLite has no partitions: past what one file and its single writer carry, the store moves to a server database.'
      : database === 'libsql'
      ? 'libSQL has no partitions and one writer per database: past what that writer carries, the store gets a database of its own.'
      : mysql
      ? `${timePartitionCaveat(database === 'mariadb' ? 'MariaDB' : 'MySQL', 'every partitioning column in the primary key')} If the table still outgrows the batched cleanup, KEY-partition on (scope, key), which keeps the guarantee.`
      : TIME_PARTITION_CAVEAT;
  return {
    table: 'idempotency_store',
    stepTable: 'idempotency_saga_steps',
    // The column every generated store's DDL uses (MySQL quotes it, `key` being a reserved word there).
    keyColumn: 'key',
    highVolume,
    volumeNote:
      database === 'sqlite' || database === 'libsql' || mysql
        ? highVolume
          ? `At ${perDay} (above 100,000) cleanup runs in small batches along the expiry index. ${caveat}`
          : `At ${perDay} a single table with batched deletes is enough. ${caveat}`
        : highVolume
        ? `At ${perDay} (above 100,000) the table gets aggressive autovacuum settings and a fill factor that keeps updates in place, and cleanup runs in small batches along the expiry index. ${caveat} If the table still outgrows that, hash-partition on (scope, key), which keeps the guarantee, and keep the batched cleanup.`
        : `At ${perDay} a single table with batched deletes is enough. ${caveat}`,
  };
}

export function buildCleanup(retentionMs: number, highVolume: boolean, database?: StackDesign['storeDatabase']): CleanupPolicy {
  // Run often enough that expired rows stay a small fraction of the live window; at high volume, more often
  // so each run deletes less and autovacuum keeps up.
  const everyMinutes = highVolume ? 5 : retentionMs >= 7 * 86_400_000 ? 60 : 15;
  const selfCleaning = database ? STORE_FACTS[database].selfCleaning : undefined;
  return {
    job: !selfCleaning,
    schedule: everyMinutes === 60 ? '7 * * * *' : `*/${everyMinutes} * * * *`,
    scheduleLabel: `every ${everyMinutes} minutes`,
    batchSize: 1_000,
    strategy:
      selfCleaning ??
      'Delete up to 1,000 expired rows per statement, repeating until a batch comes back short. Finished rows go once expires_at has passed; a PROCESSING row goes only when both its retention and its lease have lapsed (an abandoned claim), so a live claim is never deleted, however old.',
  };
}
