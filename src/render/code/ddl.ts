import type { DesignModel } from '../../model/types.js';

export interface CodeSample {
  language: string;
  code: string;
  path?: string;
  /** Already formatted (the scaffold file as written); the document embeds it as is. */
  formatted?: boolean;
}

const seconds = (ms: number) => Math.round(ms / 1000);

/** DDL for the store on the user's database; non-relational stores get their own logical design. */
export function storeDdl(model: DesignModel): CodeSample {
  const db = model.stack.storeDatabase;
  if (db === 'mysql' || db === 'mariadb') return { language: 'sql', code: mysqlDdl(model) };
  if (db === 'sqlite') return { language: 'sql', code: sqliteDdl(model) };
  if (db === 'mongodb') return { language: 'typescript', code: mongoSetup(model) };
  if (db === 'dynamodb') return { language: 'typescript', code: dynamoSetup(model) };
  if (db === 'redis') return { language: 'text', code: redisLayout(model) };
  return { language: 'sql', code: postgresDdl(model) };
}

function postgresDdl(model: DesignModel): string {
  const { table, stepTable, highVolume } = model.storage;
  const retention = seconds(model.retention.effectiveMs);
  return `-- Idempotency store for ${model.stack.databaseLabel}. Every timestamp comes from now() on the server.
CREATE TABLE ${table} (
  scope             VARCHAR(128) NOT NULL,            -- principal: user, account or tenant id
  key               VARCHAR(255) NOT NULL,
  action            VARCHAR(100) NOT NULL,
  fingerprint       CHAR(64)     NOT NULL,            -- SHA-256 hex of the canonical significant fields
  fingerprint_alg   VARCHAR(32)  NOT NULL DEFAULT '${model.fingerprint.algorithmId}',
  status            VARCHAR(16)  NOT NULL DEFAULT 'PROCESSING',
  fencing_token     BIGINT       NOT NULL DEFAULT 1,  -- bumped on every reclaim; completion must match it
  locked_until      TIMESTAMPTZ,                      -- lease; NULL once finished
  response_status   SMALLINT,
  response_headers  JSONB,
  response_body     BYTEA,                            -- exact bytes, replayed unchanged
  created_at        TIMESTAMPTZ  NOT NULL DEFAULT now(),
  completed_at      TIMESTAMPTZ,
  expires_at        TIMESTAMPTZ  NOT NULL DEFAULT now() + interval '${retention} seconds',
  CONSTRAINT pk_${table} PRIMARY KEY (scope, key),
  CONSTRAINT chk_${table}_status CHECK (status IN ('PROCESSING', 'COMPLETED', 'FAILED')),
  CONSTRAINT chk_${table}_fingerprint CHECK (fingerprint ~ '^[0-9a-f]{64}$'),
  CONSTRAINT chk_${table}_key CHECK (key ~ '^[\\x21-\\x7E]{1,255}$'),
  CONSTRAINT chk_${table}_lease CHECK ((status = 'PROCESSING') = (locked_until IS NOT NULL)),
  CONSTRAINT chk_${table}_response CHECK (status <> 'COMPLETED' OR response_status IS NOT NULL)
);

-- Cleanup scans finished rows by expiry; in-flight rows are never candidates.
CREATE INDEX idx_${table}_expires ON ${table} (expires_at) WHERE status <> 'PROCESSING';
-- Orphan detection: leases that lapsed.
CREATE INDEX idx_${table}_orphans ON ${table} (locked_until) WHERE status = 'PROCESSING';
${
  highVolume
    ? `
-- High volume: keep updates in place and vacuum early instead of partitioning by time
-- (a time-partitioned table cannot keep one row per (scope, key) across partitions).
ALTER TABLE ${table} SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
`
    : ''
}
-- Saga steps: one row per step of a multi-step action, under the outer key.
CREATE TABLE ${stepTable} (
  scope            VARCHAR(128) NOT NULL,
  key              VARCHAR(255) NOT NULL,
  step_index       SMALLINT     NOT NULL,
  step_name        VARCHAR(100) NOT NULL,
  status           VARCHAR(16)  NOT NULL,
  result           JSONB,
  updated_at       TIMESTAMPTZ  NOT NULL DEFAULT now(),
  CONSTRAINT pk_${stepTable} PRIMARY KEY (scope, key, step_index),
  CONSTRAINT chk_${stepTable}_status CHECK (status IN ('DONE', 'COMPENSATED')),
  CONSTRAINT fk_${stepTable}_record FOREIGN KEY (scope, key) REFERENCES ${table} (scope, key) ON DELETE CASCADE
);`;
}

function mysqlDdl(model: DesignModel): string {
  const { table, stepTable } = model.storage;
  const retention = seconds(model.retention.effectiveMs);
  return `-- Idempotency store for ${model.stack.databaseLabel} (8.0.16+ / 10.2+ for enforced CHECK constraints).
-- Every timestamp comes from the server: CURRENT_TIMESTAMP(3), never the application clock.
CREATE TABLE ${table} (
  scope             VARCHAR(128) NOT NULL,
  idempotency_key   VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  action            VARCHAR(100) NOT NULL,
  fingerprint       CHAR(64)     CHARACTER SET ascii NOT NULL,
  fingerprint_alg   VARCHAR(32)  NOT NULL DEFAULT '${model.fingerprint.algorithmId}',
  status            VARCHAR(16)  NOT NULL DEFAULT 'PROCESSING',
  fencing_token     BIGINT       NOT NULL DEFAULT 1,
  locked_until      DATETIME(3)  NULL,
  response_status   SMALLINT     NULL,
  response_headers  JSON         NULL,
  response_body     LONGBLOB     NULL,
  created_at        DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  completed_at      DATETIME(3)  NULL,
  expires_at        DATETIME(3)  NOT NULL DEFAULT (CURRENT_TIMESTAMP(3) + INTERVAL ${retention} SECOND),
  CONSTRAINT pk_${table} PRIMARY KEY (scope, idempotency_key),
  CONSTRAINT chk_${table}_status CHECK (status IN ('PROCESSING', 'COMPLETED', 'FAILED')),
  CONSTRAINT chk_${table}_lease CHECK ((status = 'PROCESSING') = (locked_until IS NOT NULL)),
  KEY idx_${table}_expires (status, expires_at),
  KEY idx_${table}_orphans (status, locked_until)
) ENGINE=InnoDB;
-- MySQL has no partial indexes: the status column leads both indexes instead.

CREATE TABLE ${stepTable} (
  scope            VARCHAR(128) NOT NULL,
  idempotency_key  VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  step_index       SMALLINT     NOT NULL,
  step_name        VARCHAR(100) NOT NULL,
  status           VARCHAR(16)  NOT NULL DEFAULT 'PENDING',
  result           JSON         NULL,
  updated_at       DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  CONSTRAINT pk_${stepTable} PRIMARY KEY (scope, idempotency_key, step_index),
  CONSTRAINT chk_${stepTable}_status CHECK (status IN ('PENDING', 'DONE', 'FAILED', 'COMPENSATED'))
) ENGINE=InnoDB;`;
}

function sqliteDdl(model: DesignModel): string {
  const { table } = model.storage;
  return `-- SQLite store: a single writer, so the claim runs in BEGIN IMMEDIATE; times are unixepoch() milliseconds.
CREATE TABLE ${table} (
  scope            TEXT    NOT NULL,
  idempotency_key  TEXT    NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
  action           TEXT    NOT NULL,
  fingerprint      TEXT    NOT NULL CHECK (length(fingerprint) = 64),
  fingerprint_alg  TEXT    NOT NULL DEFAULT '${model.fingerprint.algorithmId}',
  status           TEXT    NOT NULL DEFAULT 'PROCESSING' CHECK (status IN ('PROCESSING', 'COMPLETED', 'FAILED')),
  fencing_token    INTEGER NOT NULL DEFAULT 1,
  locked_until     INTEGER,
  response_status  INTEGER,
  response_headers TEXT,
  response_body    BLOB,
  created_at       INTEGER NOT NULL DEFAULT (unixepoch('subsec') * 1000),
  completed_at     INTEGER,
  expires_at       INTEGER NOT NULL,
  PRIMARY KEY (scope, idempotency_key)
) WITHOUT ROWID;
CREATE INDEX idx_${table}_expires ON ${table} (expires_at) WHERE status <> 'PROCESSING';
CREATE INDEX idx_${table}_orphans ON ${table} (locked_until) WHERE status = 'PROCESSING';`;
}

function mongoSetup(model: DesignModel): string {
  return `// MongoDB: redesigned from the logical model rather than translated from SQL.
// _id is the composite key, so the unique constraint is the primary index itself.
await db.createCollection('${model.storage.table}', {
  validator: {
    $jsonSchema: {
      required: ['_id', 'action', 'fingerprint', 'status', 'fencingToken', 'expiresAt'],
      properties: {
        _id: { bsonType: 'object', required: ['scope', 'key'] },
        status: { enum: ['PROCESSING', 'COMPLETED', 'FAILED'] },   // the CHECK constraint
        fingerprint: { bsonType: 'string', pattern: '^[0-9a-f]{64}$' },
      },
    },
  },
});
// TTL index: MongoDB removes expired records (within about a minute of expiresAt).
await db.collection('${model.storage.table}').createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 });
await db.collection('${model.storage.table}').createIndex({ status: 1, lockedUntil: 1 }, { partialFilterExpression: { status: 'PROCESSING' } });
// Claim: findOneAndUpdate({ _id, $or: [{ status: { $ne: 'PROCESSING' }, expiresAt: { $lte: '$$NOW' } }, { status: 'PROCESSING', lockedUntil: { $lte: '$$NOW' } }] },
//   [{ $set: { lockedUntil: { $add: ['$$NOW', leaseMs] }, fencingToken: { $add: [{ $ifNull: ['$fencingToken', 0] }, 1] } } }], { upsert: true })
// A duplicate-key error on upsert means the key is held: read it and decide replay / 409.`;
}

function dynamoSetup(model: DesignModel): string {
  return `// DynamoDB: one item per (scope, key); the conditional write is the lock.
// Table ${model.storage.table}: partition key pk = "{scope}#{key}", TTL attribute expiresAtEpoch.
const claim = new PutCommand({
  TableName: '${model.storage.table}',
  Item: { pk, action, fingerprint, status: 'PROCESSING', fencingToken: token, lockedUntil: nowMs + leaseMs, expiresAtEpoch },
  // The CHECK and PRIMARY KEY equivalents: only a new key, or an expired lease, can be claimed.
  ConditionExpression: 'attribute_not_exists(pk) OR (#s = :processing AND lockedUntil < :now) OR expiresAtEpoch < :nowSec',
  ExpressionAttributeNames: { '#s': 'status' },
  ExpressionAttributeValues: { ':processing': 'PROCESSING', ':now': nowMs, ':nowSec': Math.floor(nowMs / 1000) },
});
// DynamoDB has no server clock in expressions: nowMs comes from the app, so leases carry
// a ${model.lock.skewBufferMs / 1000}-second skew buffer and instances must run NTP.`;
}

function redisLayout(model: DesignModel): string {
  return `# Redis: one hash per (scope, key); SET NX PX is the claim, a Lua script the fenced completion.
# Key: idem:{scope}:{key}   Fields: action fingerprint status fencing_token response_status response_headers response_body
SET   idem:{scope}:{key}:lock <token> NX PX <lease ms>      # claim (fails if held)
HSET  idem:{scope}:{key} status PROCESSING fingerprint <sha256> fencing_token <token>
PEXPIRE idem:{scope}:{key} ${model.retention.effectiveMs}    # retention, enforced by Redis itself
# Complete only if the fencing token still matches (Lua, atomic):
#   if redis.call('HGET', KEYS[1], 'fencing_token') == ARGV[1] then HSET … status COMPLETED … end
# Redis must run with appendfsync everysec or stricter: a lost write here is a duplicate charge later.`;
}
