import type { ScaffoldView } from './scaffoldView.js';

const ident = (name: string) => name.split('.').map((part) => (/^[a-z_][a-z0-9_]*$/.test(part) ? part : `"${part.replace(/"/g, '""')}"`)).join('.');
const indexName = (table: string, suffix: string) => ident(`${table.split('.').pop()!}_${suffix}`);

/** The PostgreSQL migration: the store table, its fencing sequence, the two partial indexes and the saga step table. */
export function renderMigration(view: ScaffoldView): string {
  const t = ident(view.policy.table);
  const steps = ident(view.policy.stepTable);
  const seq = ident(`${view.policy.table}_fencing_seq`);
  const partitionNote = view.partitioned
    ? `-- Volume: the design expects enough keys a day to consider partitioning (${view.partitionReason.replace(/\n/g, ' ')})
-- This table stays unpartitioned on purpose: PostgreSQL requires the partition column in every unique
-- constraint, so a table partitioned by created_at could hold one (scope, key) twice, in two partitions, and a
-- retry arriving after a partition boundary would run the action again. Instead the settings below keep batched
-- cleanup cheap at high volume (frequent autovacuum, HOT-friendly fill factor), and cleanup.ts deletes in small
-- batches along the expires_at partial index. If you archive, copy expired rows out before cleanup deletes them.
ALTER TABLE ${t} SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
`
    : `-- Volume: ${view.partitionReason.replace(/\n/g, ' ')}
-- Keep the table unpartitioned even then: a partitioned table cannot enforce one row per (scope, key) across
-- partitions (the partition column must be part of the primary key), which is the guarantee everything rests on.
-- Tune autovacuum instead: ALTER TABLE ${t} SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02);
`;
  return `-- Idempotency store for PostgreSQL 13+. Apply once with your migration tool (or psql -f).
-- All timestamps are written by the database (now()), never by application servers, so clock skew between
-- instances cannot make a live claim look expired.

-- Fencing tokens come from one sequence so they only ever grow, even when a record is deleted and its key reused:
-- a worker holding an old token can never match a newer claim.
CREATE SEQUENCE IF NOT EXISTS ${seq};

CREATE TABLE IF NOT EXISTS ${t} (
  scope            varchar(255) NOT NULL,            -- the principal that owns the key ('global' for unscoped actions)
  key              varchar(255) NOT NULL,            -- the Idempotency-Key (or the server-derived key)
  action           varchar(100) NOT NULL,
  fingerprint      char(64)     NOT NULL,            -- SHA-256 hex of the canonical significant fields
  fingerprint_alg  varchar(40)  NOT NULL,            -- algorithm id, so the canonical form can evolve safely
  status           varchar(20)  NOT NULL DEFAULT 'PROCESSING',
  fencing_token    bigint       NOT NULL DEFAULT nextval('${seq.replace(/'/g, "''")}'),
  locked_until     timestamptz,                      -- lease end while PROCESSING; NULL once finished
  released_at      timestamptz,                      -- set when the owner gave the claim back after an error
  response_status  smallint,
  response_headers jsonb,                            -- allow-listed headers only
  response_body    bytea,                            -- exact bytes, so a replay is byte-identical
  created_at       timestamptz  NOT NULL DEFAULT now(),
  completed_at     timestamptz,
  expires_at       timestamptz  NOT NULL,
  CONSTRAINT ${indexName(view.policy.table, 'pkey')} PRIMARY KEY (scope, key),
  CONSTRAINT ${indexName(view.policy.table, 'status_check')} CHECK (status IN ('PROCESSING', 'COMPLETED', 'FAILED')),
  -- A PROCESSING record always has a lease; a finished one always has its response.
  CONSTRAINT ${indexName(view.policy.table, 'lease_check')} CHECK ((status = 'PROCESSING') = (locked_until IS NOT NULL)),
  CONSTRAINT ${indexName(view.policy.table, 'response_check')} CHECK (status = 'PROCESSING' OR response_status IS NOT NULL)
);

-- Cleanup walks this index: finished records by expiry, never the in-flight ones.
CREATE INDEX IF NOT EXISTS ${indexName(view.policy.table, 'expires_idx')} ON ${t} (expires_at) WHERE status <> 'PROCESSING';

-- Orphan detection (runbook query, oldest-in-flight metric) walks this one: only in-flight claims, by lease end.
CREATE INDEX IF NOT EXISTS ${indexName(view.policy.table, 'orphan_locks_idx')} ON ${t} (locked_until) WHERE status = 'PROCESSING';

-- One row per saga step of a claimed action; each step has its own sub-key ({key}_{index}) for provider calls.
CREATE TABLE IF NOT EXISTS ${steps} (
  scope       varchar(255) NOT NULL,
  key         varchar(255) NOT NULL,
  step_index  smallint     NOT NULL,
  step_name   varchar(100) NOT NULL,
  sub_key     varchar(300) NOT NULL,
  status      varchar(20)  NOT NULL,
  result      jsonb,
  updated_at  timestamptz  NOT NULL DEFAULT now(),
  CONSTRAINT ${indexName(view.policy.stepTable, 'pkey')} PRIMARY KEY (scope, key, step_index),
  CONSTRAINT ${indexName(view.policy.stepTable, 'status_check')} CHECK (status IN ('DONE', 'COMPENSATED')),
  CONSTRAINT ${indexName(view.policy.stepTable, 'record_fkey')} FOREIGN KEY (scope, key) REFERENCES ${t} (scope, key) ON DELETE CASCADE
);

${partitionNote}`;
}
