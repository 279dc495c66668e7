import type { FindingDesign } from './findings.js';
import type { ActionCodeDesign, ProposedSaga } from './fromCode.js';
import type { StoreFailure } from './storeFacts.js';
import type {
  Database,
  Framework,
  KeySource,
  Transport,
  Provider,
  RetrySource,
  Scope,
  Trigger,
} from '../config/schema.js';

/**
 * DesignModel: the one contract between the decisions (buildDesign) and everything that presents
 * them (document renderers, diagrams, scaffolding, verify). Renderers never look at raw config.
 * All prose fields are plain text (renderers escape them); all numbers are already decided.
 */
export interface DesignModel {
  title: string;
  /** YYYY-MM-DD; the only date in the output. */
  generatedOn: string;
  stack: StackDesign;
  concurrency: { value: 'single-server' | 'multi-instance' | 'global'; label: string; consequence: string };
  actions: ActionDesign[];
  keys: KeyPolicy;
  fingerprint: FingerprintPolicy;
  lock: LockPolicy;
  retention: RetentionPolicy;
  detection: DetectionPolicy;
  responses: ResponsePolicy;
  providers: ProviderDesign[];
  sagas: SagaDesign[];
  /** Sagas proposed from the code (several external effects in sequence) for actions the config gives no steps. */
  proposedSagas: ProposedSaga[];
  storage: StorageDesign;
  cleanup: CleanupPolicy;
  security: SecurityItem[];
  metrics: MetricDesign[];
  tests: TestScenario[];
  buildOrder: BuildStep[];
  runbook: RunbookEntry[];
  antiPatterns: AntiPattern[];
  /** Everything the tool assumed rather than read from config or code; listed in the document. */
  assumptions: string[];
  /** Protection the codebase already has (from inspection), credited rather than re-designed. */
  existingProtection: ExistingProtection[];
  /** What inspection found and the config does not protect, each with the reason init gave; empty when not read. */
  reviewed: ReviewedCandidate[];
  /** Defects the findings rules saw in the code; empty when the design was made from the config alone. */
  findings: FindingDesign[];
  /** Whether the code was read for findings at all (an empty list then means "none found", not "not looked"). */
  codeAudited: boolean;
  /** The spec's seven testable constraints, each checked against this model. */
  constraints: ConstraintCheck[];
  /** Whether the request-handling flowchart pays off (spec: skip diagrams that restate a small table). */
  diagrams: { flowchart: boolean; flowchartReason: string };
  /**
   * What the scaffolding of this design contains, read from the files generated for it (set by generate once the
   * scaffold is planned); absent when the model was built without one. The document names only these files.
   */
  scaffold?: ScaffoldFacts;
}

export interface ScaffoldFacts {
  /** The project-relative folder of the scaffolding, e.g. "src/idempotency". */
  dir: string;
  /** False when the config turns scaffolding off: the document then shows what generate would write there. */
  written: boolean;
  /** Every generated file, project-relative, sorted. */
  files: string[];
  /** Set when the stack has no target of its own: the label of the reference target the code is generated for. */
  reference?: string;
  /** The reconciliation job (reconcile/job.ts or .js) when the scaffold has one. */
  reconcileJob?: string;
  /** The per-provider reconciliation lookups the scaffold has (provider id → path). */
  reconcileLookups: Partial<Record<string, string>>;
}

export interface StackDesign {
  language: 'typescript' | 'javascript';
  framework: Framework;
  database: Database;
  broker: string;
  testFramework: string;
  /** True when the stack was unknown and the design falls back to the PostgreSQL reference. */
  agnostic: boolean;
  /** What was not given or found, when agnostic: the language is then shown as TypeScript. */
  unknownParts?: Array<'language' | 'framework' | 'database'>;
  frameworkLabel: string;
  databaseLabel: string;
  brokerLabel: string;
  testFrameworkLabel: string;
  /** The database the DDL and store code target (postgres when agnostic). */
  storeDatabase: Database;
  storeKind: 'relational' | 'document' | 'key-value';
  /** The statement that claims a key atomically on this store, in words and code. */
  claimPrimitive: string;
  /** How the overview says a key is claimed on this store: "with one atomic statement". */
  claimIn: string;
  /** False where the store has no transaction that could include the action's own writes (lease mode only). */
  transactional: boolean;
  /** Transactional mode: what a concurrent duplicate waits on ("the key's unique index"). */
  duplicateWaitsOn?: string;
  /**
   * The generated code is the plain idempotent(fn) wrapper (framework unknown, no action a plain HTTP route): it
   * returns the stored JSON result or throws, it answers no HTTP. Every section that says what a caller gets reads
   * this one flag. Absent for HTTP designs.
   */
  plain?: true;
  /**
   * Every action is a queue consumer or a cron job: the generated code is idempotentHandler (consumers/handler.ts)
   * and CronGuard (cron/guard.ts), whose outcomes decide acknowledgement and slots; nothing answers HTTP. Sections
   * that say what a caller gets read this flag before `plain`, which it excludes. Absent otherwise.
   */
  worker?: true;
}

export interface ActionDesign {
  name: string;
  /** Anchor- and file-safe identifier, unique in the document. */
  slug: string;
  /** A valid camelCase identifier for generated code. */
  codeName: string;
  trigger: Trigger;
  triggerLabel: string;
  route?: string;
  /**
   * A GraphQL mutation, tRPC procedure or Server Action: no request goes to `route`, which only names it (and is
   * hashed into the fingerprint as a label). Absent for a plain HTTP route.
   */
  transport?: Transport;
  /** A consumer: the broker that delivers it (its own where inspection found it, else the stack's; absent for none). */
  broker?: string;
  /** For http/webhook routes "POST /payments/:id": the method and path template. */
  method?: string;
  path?: string;
  source?: string;
  executes: string;
  duplicateImpact: string;
  severity: 'financial' | 'data' | 'external' | 'notification';
  retrySources: RetrySourceDesign[];
  significantFields: string[];
  excludedFields: FieldExclusion[];
  recovery: string;
  key: ActionKeyDesign;
  scope: Scope;
  scopeLabel: string;
  scopeReason: string;
  provider?: Provider;
  steps: StepDesign[];
  expectedDurationMs: number;
  durationAssumed: boolean;
  /** How the runtime holds the key: one transaction with the action's writes, or a committed lease. */
  mode: 'transactional' | 'lease';
  modeReason: string;
  /** Log-only: requests always run and would-be refusals are only counted; undefined means enforce. */
  rollout?: 'log-only';
  /** Lease length for this action's claim. */
  lockTimeoutMs: number;
  lockJustification: string;
  /** Heartbeat interval when the action can outlive a comfortable lease; undefined when not needed. */
  heartbeatMs?: number;
  volumePerDay: number;
  uniqueness: UniquenessAssessment;
  existing: string[];
  /** Findings in this action's handler file. */
  findings: FindingDesign[];
  /** What `apply` edited in the user's code for this action and what it left manual (from .idempotency-builder/apply.json). */
  wiring?: { applied: Array<{ file: string; summary: string }>; manual: Array<{ file?: string; line?: number; reason: string }> };
  /** What its code does, when the code was read: handler, provider calls with their cost, writes. */
  code?: ActionCodeDesign;
}

export interface RetrySourceDesign {
  id: RetrySource;
  label: string;
  how: string;
}

export interface FieldExclusion {
  field: string;
  reason: string;
}

export interface ActionKeyDesign {
  source: KeySource;
  sourceLabel: string;
  /** Where the key comes from at runtime, e.g. "Idempotency-Key header" or "Stripe event id". */
  carrier: string;
  from?: string[];
  /** The hidden form field a server-rendered form posts the key in (when the request has no key header). */
  field?: string;
  /** The server-rendered forms that post it, when `field` is set and inspection found them (view file:line). */
  forms?: Array<{ file: string; line: number }>;
  format: string;
  example: string;
}

export interface UniquenessAssessment {
  bits: number;
  keysInWindow: number;
  /** Birthday-bound probability of any collision among keysInWindow keys. */
  collisionProbability: number;
  verdict: 'negligible' | 'acceptable' | 'too-small';
  explanation: string;
}

export interface StepDesign {
  index: number;
  name: string;
  compensation?: string;
  provider?: Provider;
  /** Example sub-key for this step, derived from the action's example key. */
  subKeyExample: string;
  providerKeyExample?: string;
}

export interface KeyPolicy {
  header: string;
  maxLength: number;
  charset: string;
  charsetPattern: string;
  validation: string[];
  generation: string;
  /** How server-rendered forms get their keys, when some action is posted by one. */
  formGeneration?: string;
  timeVaryingWarning: string;
}

export interface FingerprintPolicy {
  algorithmId: string;
  algorithm: string;
  encoding: string;
  canonicalization: string;
  comparison: string;
  alwaysExcluded: FieldExclusion[];
  mismatchStatus: 409 | 422;
  mismatchBody: string;
}

export interface LockPolicy {
  skewBufferMs: number;
  safetyFactor: number;
  defaultDurationMs: number;
  claim: string;
  contested: string;
  reclaim: string;
  clock: string;
  aba: string;
  summary: string;
}

export interface RetentionPolicy {
  configuredMs: number;
  effectiveMs: number;
  label: string;
  justification: string;
  floors: Array<{ reason: string; ms: number }>;
  raised: boolean;
}

export interface DetectionPolicy {
  targetMs: number;
  expectedMs: number;
  meets: boolean;
  justification: string;
  /** acquireTimeoutMs + statementTimeoutMs: the longest a request waits on the store before 503. */
  storeTimeoutMs: number;
  acquireTimeoutMs: number;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  /** Lease mode: how long a failed completion is retried before the client is told the outcome is unknown. */
  completionRetryMs: number;
  /** The "Duplicate detection" summary for this store (from STORE_FACTS), target included. */
  summary: string;
  /** This store's rows of "When the store or the completion fails". */
  failures: StoreFailure[];
}

export interface ResponsePolicy {
  mismatchStatus: 409 | 422;
  inFlightStatus: 409;
  inFlight: 'reject' | 'wait';
  inFlightWaitMs: number;
  retryAfterSeconds: number;
  storeUnavailableStatus: 503;
  maxStoredResponseBytes: number;
  replayHeader: string;
  problemType: string;
  replayedHeaders: string[];
  rules: Array<{ situation: string; response: string; stored: string }>;
}

export interface ProviderDesign {
  id: Provider;
  label: string;
  mechanism: string;
  derivation: string;
  example: string;
  maxLength?: number;
  windowMs?: number;
  windowLabel: string;
  coordination: string;
  /** UUIDv5 namespace when the provider key is a name-based UUID (PayPal). */
  namespace?: string;
  actions: string[];
}

export interface SagaDesign {
  action: string;
  slug: string;
  steps: StepDesign[];
  resume: string;
  compensation: string;
}

export interface StorageDesign {
  table: string;
  stepTable: string;
  /** Column holding the key: "key" on PostgreSQL (as the scaffolding writes it), "idempotency_key" where KEY is reserved. */
  keyColumn: string;
  /** Above 100,000 keys a day: the spec's partitioning threshold, answered with tuning rather than time partitions. */
  highVolume: boolean;
  volumeNote: string;
}

export interface CleanupPolicy {
  schedule: string;
  scheduleLabel: string;
  batchSize: number;
  strategy: string;
  /** False where the store expires records itself (Redis): no cleanup job is generated or scheduled. */
  job: boolean;
}

export interface SecurityItem {
  topic: string;
  decision: string;
}

export interface MetricDesign {
  /** The spec's dotted name, e.g. "idempotency.duplicates_blocked". */
  name: string;
  /** Prometheus name, e.g. "idempotency_duplicates_blocked_total". */
  promName: string;
  type: 'counter' | 'gauge' | 'histogram';
  labels: string[];
  meaning: string;
  alert: string;
  /** PromQL expression for the alert, or undefined when it is informational. */
  alertExpr?: string;
  severity: 'page' | 'ticket' | 'info';
}

export interface TestScenario {
  id: string;
  name: string;
  input: string;
  expected: string;
  verifies: string;
  concurrent?: boolean;
}

export interface BuildStep {
  step: number;
  title: string;
  detail: string;
  safety: string;
}

export interface RunbookEntry {
  id: string;
  title: string;
  symptom: string;
  steps: string[];
}

export interface AntiPattern {
  id: string;
  pattern: string;
  whyItFails: string;
  here: string;
}

export interface ExistingProtection {
  file: string;
  line: number;
  mechanism: string;
  detail: string;
}

/**
 * An endpoint, consumer or job inspection found that no configured action covers: the design names it and says why
 * it is left out, so a reader sees what was looked at, not only what was chosen.
 */
export interface ReviewedCandidate {
  /** The action name init would give it, ready to paste into the config. */
  name: string;
  trigger: 'http' | 'webhook' | 'consumer' | 'cron';
  /** `POST /users`, a queue, a schedule. */
  route?: string;
  /** How an HTTP action is reached when it is not a request to a path of its own. */
  transport?: 'graphql' | 'trpc' | 'server-action';
  /** `file:line` of its handler or registration. */
  source: string;
  reason: string;
}

export interface ConstraintCheck {
  id: string;
  statement: string;
  satisfied: boolean;
  evidence: string;
}
