import type { Config, Database } from '../config/schema.js';
import { BROKER_LABELS, DATABASE_LABELS, FRAMEWORK_LABELS, TEST_FRAMEWORK_LABELS } from './labels.js';
import type { StackDesign } from './types.js';

const CLAIM: Record<Database, { kind: StackDesign['storeKind']; claim: string }> = {
  postgres: { kind: 'relational', claim: 'INSERT … ON CONFLICT (scope, key) DO UPDATE … WHERE the existing row is expired or its lease has lapsed, RETURNING the row and whether it was taken' },
  mysql: { kind: 'relational', claim: 'INSERT … ON DUPLICATE KEY UPDATE with conditional assignments (take over only when expired or the lease lapsed), then read the row back in the same transaction' },
  mariadb: { kind: 'relational', claim: 'INSERT … ON DUPLICATE KEY UPDATE with conditional assignments, with RETURNING-free read-back in the same transaction' },
  sqlite: { kind: 'relational', claim: 'INSERT … ON CONFLICT DO UPDATE … WHERE, inside a BEGIN IMMEDIATE transaction (single writer)' },
  mongodb: { kind: 'document', claim: 'findOneAndUpdate with upsert on a unique index over {scope, key}, the takeover conditions in the filter' },
  dynamodb: { kind: 'key-value', claim: 'PutItem with ConditionExpression attribute_not_exists(pk) OR lockedUntil < :now, using a server-side timestamp attribute' },
  redis: { kind: 'key-value', claim: 'SET key value NX PX lease for the claim, and a Lua script for compare-and-set completion by fencing token' },
  unknown: { kind: 'relational', claim: 'INSERT … ON CONFLICT (scope, key) DO UPDATE … WHERE expired or lease lapsed, RETURNING (PostgreSQL reference)' },
};

export function buildStack(config: Config): { stack: StackDesign; assumptions: string[] } {
  const assumptions: string[] = [];
  const s = config.stack;
  const agnostic = s.database === 'unknown' || s.framework === 'unknown' || s.language === 'unknown';
  if (s.language === 'unknown') assumptions.push('The language was not given: code is shown in TypeScript and needs translating to your language.');
  if (s.framework === 'unknown') assumptions.push('The framework was not given: the middleware is written against a minimal request/response interface and needs an adapter for your framework.');
  if (s.database === 'unknown') assumptions.push('The database was not given: the design uses the PostgreSQL reference schema; for a non-relational store, redesign from the logical model (key, fingerprint, status, lease, response, expiry) rather than translating the DDL.');
  const storeDatabase: Database = s.database === 'unknown' ? 'postgres' : s.database;
  const claim = CLAIM[storeDatabase];
  return {
    stack: {
      language: s.language === 'javascript' ? 'javascript' : 'typescript',
      framework: s.framework,
      database: s.database,
      broker: s.broker,
      testFramework: s.testFramework,
      agnostic,
      frameworkLabel: FRAMEWORK_LABELS[s.framework],
      databaseLabel: DATABASE_LABELS[s.database],
      brokerLabel: BROKER_LABELS[s.broker] ?? s.broker,
      testFrameworkLabel: TEST_FRAMEWORK_LABELS[s.testFramework] ?? s.testFramework,
      storeDatabase,
      storeKind: claim.kind,
      claimPrimitive: claim.claim,
    },
    assumptions,
  };
}
