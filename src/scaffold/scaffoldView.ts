import type { ActionDesign, DesignModel, MetricDesign } from '../model/types.js';
import { deliveringBroker } from '../model/workerOutcomes.js';

/**
 * What the generated TypeScript needs from the design, flattened to plain values. Renderers read only this, so
 * the design model can grow without touching templates.
 */
export interface ScaffoldView {
  title: string;
  actions: ActionView[];
  policy: {
    keyHeader: string;
    maxKeyLength: number;
    keyPattern: string;
    mismatchStatus: 409 | 422;
    inFlight: 'reject' | 'wait';
    inFlightWaitMs: number;
    retryAfterSeconds: number;
    replayHeader: string;
    replayedHeaders: string[];
    problemTypeBase: string;
    retentionMs: number;
    acquireTimeoutMs: number;
    statementTimeoutMs: number;
    lockTimeoutMs: number;
    storeTimeoutMs: number;
    completionRetryMs: number;
    maxStoredResponseBytes: number;
    fingerprintAlgorithm: string;
    table: string;
    stepTable: string;
    cleanupBatchSize: number;
    poolSize: number;
  };
  retentionLabel: string;
  partitioned: boolean;
  partitionReason: string;
  cleanupSchedule: string;
  cleanupScheduleLabel: string;
  providers: Array<{ id: 'stripe' | 'adyen' | 'paypal' | 'bank-transfer'; namespace?: string }>;
  metricNames: Record<MetricRole, string>;
  /**
   * Whether the store has a cleanup job (the SQL stores); Redis and DynamoDB expire records by TTL, so their
   * scaffold carries no cleanup counter (metrics.ts, METRIC_NAMES) and no alert on it.
   */
  cleanupJob: boolean;
  alerts: Array<{ name: string; expr: string; severity: string; summary: string }>;
  /**
   * The action the generated tests drive: HTTP with a client key if there is one. In a design without HTTP actions
   * it is the first action, and the suite drives the core the way its trigger's processor does (no HTTP route).
   */
  testAction: ActionView;
  sagaAction?: ActionView;
}

export interface ActionView {
  name: string;
  codeName: string;
  trigger: ActionDesign['trigger'];
  method?: string;
  route: string;
  significantFields: string[];
  scope: ActionDesign['scope'];
  mode: ActionDesign['mode'];
  rollout?: 'log-only';
  keySource: ActionDesign['key']['source'];
  keyFrom?: string[];
  /** The hidden form field a server-rendered form posts the key in. */
  keyField?: string;
  leaseMs: number;
  heartbeatMs?: number;
  steps: Array<{ index: number; name: string; compensation?: string }>;
  /**
   * Whether the HTTP middleware is this action's entry point: only for client-facing HTTP actions. Webhooks,
   * consumers and scheduled jobs are keyed by what their sender carries (event id, message id, slot) through the
   * processors in webhooks/, consumers/ and cron/, never by an Idempotency-Key header the sender does not send.
   */
  http: boolean;
  /** A GraphQL mutation, tRPC procedure or Server Action: no route of its own to mount anything on. */
  transport?: ActionDesign['transport'];
  /** A consumer: the broker that delivers it, as the document names it (its own, else the stack's). */
  broker?: string;
}

export type MetricRole =
  | 'requests'
  | 'duplicatesBlocked'
  | 'lockTimeouts'
  | 'fingerprintMismatches'
  | 'storeSize'
  | 'processingDuration'
  | 'keysCreatedPerUser'
  | 'orphanReclaims'
  | 'storeErrors'
  | 'outcomeUnknown'
  | 'logOnly'
  | 'cleanupDeleted'
  | 'oldestInFlightAge';

/** Prometheus names (what the alert expressions query) for the spec's metrics plus the operational ones. */
const PROMETHEUS_NAMES: Record<MetricRole, string> = {
  requests: 'idempotency_requests_total',
  duplicatesBlocked: 'idempotency_duplicates_blocked_total',
  lockTimeouts: 'idempotency_lock_timeouts_total',
  fingerprintMismatches: 'idempotency_fingerprint_mismatches_total',
  storeSize: 'idempotency_store_rows',
  processingDuration: 'idempotency_processing_duration_ms',
  keysCreatedPerUser: 'idempotency_keys_created_total',
  orphanReclaims: 'idempotency_orphan_reclaims_total',
  storeErrors: 'idempotency_store_errors_total',
  outcomeUnknown: 'idempotency_outcome_unknown_total',
  logOnly: 'idempotency_log_only_total',
  cleanupDeleted: 'idempotency_cleanup_deleted_rows_total',
  oldestInFlightAge: 'idempotency_oldest_in_flight_age_seconds',
};

function toActionView(action: ActionDesign, stackBroker: string): ActionView {
  const http = action.trigger === 'http' && action.path !== undefined;
  return {
    name: action.name,
    codeName: action.codeName,
    trigger: action.trigger,
    method: http ? (action.method ?? 'POST').toUpperCase() : undefined,
    route: action.path ?? action.route ?? action.codeName,
    ...(action.transport ? { transport: action.transport } : {}),
    ...(action.trigger === 'consumer' ? { broker: deliveringBroker(action, stackBroker) } : {}),
    significantFields: [...action.significantFields],
    scope: action.scope,
    mode: action.mode,
    ...(action.rollout ? { rollout: action.rollout } : {}),
    keySource: action.key.source,
    keyFrom: action.key.source === 'derived' ? [...(action.key.from ?? action.significantFields)] : undefined,
    ...(action.key.field !== undefined ? { keyField: action.key.field } : {}),
    leaseMs: action.lockTimeoutMs,
    heartbeatMs: action.heartbeatMs,
    steps: action.steps.map((step) => ({ index: step.index, name: step.name, compensation: step.compensation })),
    http,
  };
}

const alertName = (metric: MetricDesign) =>
  metric.name
    .replace(/^idempotency[._]/, 'Idempotency_')
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/**
 * Connections in the store's pool per process: one server may use more of PostgreSQL's default max_connections (100);
 * several instances share it, so each keeps fewer.
 */
function poolSizeFor(concurrency: 'single-server' | 'multi-instance' | 'global'): number {
  return concurrency === 'single-server' ? 20 : 10;
}

export function buildScaffoldView(model: DesignModel): ScaffoldView {
  const actions = model.actions.map((action) => toActionView(action, model.stack.broker));
  const httpActions = actions.filter((action) => action.http);
  const testAction = httpActions.find((action) => action.keySource !== 'derived') ?? httpActions[0] ?? actions[0]!;
  const sagaAction = actions.find((action) => action.steps.length > 1);
  return {
    title: model.title,
    actions,
    policy: {
      keyHeader: model.keys.header,
      maxKeyLength: model.keys.maxLength,
      keyPattern: model.keys.charsetPattern,
      mismatchStatus: model.responses.mismatchStatus,
      inFlight: model.responses.inFlight,
      inFlightWaitMs: model.responses.inFlightWaitMs,
      retryAfterSeconds: model.responses.retryAfterSeconds,
      replayHeader: model.responses.replayHeader,
      replayedHeaders: [...new Set(['content-type', ...model.responses.replayedHeaders.map((name) => name.toLowerCase())])].filter((name) => name !== 'content-length' && name !== 'set-cookie'),
      problemTypeBase: model.responses.problemType,
      retentionMs: model.retention.effectiveMs,
      acquireTimeoutMs: model.detection.acquireTimeoutMs,
      statementTimeoutMs: model.detection.statementTimeoutMs,
      lockTimeoutMs: model.detection.lockTimeoutMs,
      storeTimeoutMs: model.detection.storeTimeoutMs,
      completionRetryMs: model.detection.completionRetryMs,
      maxStoredResponseBytes: model.responses.maxStoredResponseBytes,
      fingerprintAlgorithm: model.fingerprint.algorithmId,
      table: model.storage.table,
      stepTable: model.storage.stepTable,
      cleanupBatchSize: model.cleanup.batchSize,
      poolSize: poolSizeFor(model.concurrency.value),
    },
    retentionLabel: model.retention.label,
    partitioned: model.storage.highVolume,
    partitionReason: model.storage.volumeNote,
    cleanupSchedule: model.cleanup.schedule,
    cleanupScheduleLabel: model.cleanup.scheduleLabel,
    providers: model.providers.map((provider) => ({ id: provider.id, namespace: provider.namespace })),
    metricNames: { ...PROMETHEUS_NAMES },
    cleanupJob: model.cleanup.job,
    alerts: model.metrics
      .filter((metric): metric is MetricDesign & { alertExpr: string } => metric.alertExpr !== undefined && metric.severity !== 'info')
      .map((metric) => ({ name: alertName(metric), expr: metric.alertExpr, severity: metric.severity, summary: metric.alert })),
    testAction,
    sagaAction,
  };
}
