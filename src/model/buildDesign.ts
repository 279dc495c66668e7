import type { ActionForms } from './actionForms.js';
import type { Config, Provider, RetrySource } from '../config/schema.js';
import { buildAction } from './actions.js';
import { uniqueSlugs } from './naming.js';
import { buildCleanup, buildFingerprintPolicy, buildKeyPolicy, buildLockPolicy, buildResponsePolicy, buildStorage } from './policies.js';
import { buildProviders } from './providers.js';
import { selectAntiPatterns } from './sections/antiPatterns.js';
import { buildBuildOrder, buildMetrics, buildRunbook, buildSecurity, buildTests } from './sections/operations.js';
import { buildStack } from './stack.js';
import { checkConstraints } from './constraints.js';
import { decideDetection, decideRetention } from './timing.js';
import type { CodeFinding } from '../findings/types.js';
import { creditedFindings } from './creditedFindings.js';
import { buildFindings } from './findings.js';
import type { ActionCodeFacts } from './codeFacts.js';
import { proposeSaga, type ProposedSaga } from './fromCode.js';
import { stillUnprotected } from './reviewed.js';
import { workerKinds } from './workerOutcomes.js';
import type { DesignModel, ExistingProtection, ReviewedCandidate, SagaDesign } from './types.js';

/** The slice of an inspection the design uses; the inspector's full result satisfies it. */
export interface InspectionInput {
  findings: ReadonlyArray<{ kind: string; id: string; file: string; line: number; mechanism?: string; detail?: string }>;
}

export interface BuildOptions {
  now: Date;
  /** What the findings rules reported on the codebase (`init`, `audit`); absent when only the config is known. */
  findings?: readonly CodeFinding[];
  /** What the findings engine read from each configured action's code (handler, calls, writes, client time-outs). */
  code?: readonly ActionCodeFacts[];
  /** What init found and left unprotected; those the config now protects are dropped. */
  reviewed?: readonly ReviewedCandidate[];
  /** The broker inspection found delivering each consumer action, by action name (else the stack's broker). */
  brokers?: Readonly<Record<string, string>>;
  /** The server-rendered forms inspection found posting to each HTTP action, by action name. */
  forms?: ActionForms;
}

const DEFAULT_VOLUME_PER_DAY = 10_000;

const CONCURRENCY_TEXT: Record<Config['concurrency'], { label: string; consequence: string }> = {
  'single-server': {
    label: 'Single server',
    consequence: 'One process today, but restarts and deploys still overlap requests, so claims go through the database, not process memory.',
  },
  'multi-instance': {
    label: 'Multiple instances',
    consequence: 'Duplicates can land on different instances at the same moment; only a database constraint serialises them.',
  },
  global: {
    label: 'Globally distributed',
    consequence: 'Retries can reach another region; keys must be claimed in one authoritative store per scope, and latency to it bounds detection time.',
  },
};

/**
 * Several instances with the store in SQLite: the file's write lock serialises only the processes that open that one
 * file, on the machine that holds it. Said where the design states its concurrency, since separate hosts would each
 * claim a key in a file of their own.
 */
function concurrencyText(concurrency: Config['concurrency'], store: string | undefined): { label: string; consequence: string } {
  const text = CONCURRENCY_TEXT[concurrency];
  if (concurrency === 'single-server' || store !== 'sqlite') return text;
  return {
    ...text,
    consequence: `${text.consequence.replace(/; only a database constraint serialises them\.$/, '.')} SQLite serialises claims only between processes on one machine that open the same database file: instances on separate hosts, or containers each with a volume of their own, would each claim the same key in their own file and each run the action. Run them on one host sharing the file, or keep the store in a database they all reach (set "stack.database").`,
  };
}

/** Pure: the same config, inspection and `now` always give the same model. */
export function buildDesign(config: Config, inspection: InspectionInput | undefined, options: BuildOptions): DesignModel {
  const { stack, assumptions } = buildStack(config);
  const slugs = uniqueSlugs(config.actions.map((action) => action.name));
  const existingAll = collectExisting(inspection);

  const providersUsed = new Set<Provider>(config.payments);
  for (const action of config.actions) {
    if (action.provider) providersUsed.add(action.provider);
    for (const step of action.steps ?? []) if (step.provider) providersUsed.add(step.provider);
  }
  const retrySources = new Set<RetrySource>(config.retrySources);
  if (retrySources.size === 0) {
    assumptions.push('No retry sources were given: each action is assumed to see the usual ones for its trigger (client retries for HTTP, resends for webhooks, redelivery for consumers, overlap for jobs).');
    for (const action of config.actions) {
      const implied: RetrySource = { http: 'client-retry', webhook: 'webhook-resend', consumer: 'queue-redelivery', cron: 'cron-overlap' }[action.trigger] as RetrySource;
      retrySources.add(implied);
    }
  }
  const retention = decideRetention(config, [...providersUsed], [...retrySources]);

  const volumeGiven = config.expectedVolumePerDay;
  const sharedVolume = Math.max(1, Math.round((volumeGiven ?? DEFAULT_VOLUME_PER_DAY) / config.actions.length));
  if (volumeGiven === undefined && config.actions.some((action) => action.volumePerDay === undefined)) {
    assumptions.push(`Volume was not given: uniqueness and sizing assume ${DEFAULT_VOLUME_PER_DAY.toLocaleString('en-US')} protected requests a day across all actions.`);
  }

  const actions = config.actions.map((action, index) =>
    buildAction(action, {
      config,
      slug: slugs[index]!,
      databaseLabel: stack.databaseLabel,
      retentionMs: retention.effectiveMs,
      volumePerDay: action.volumePerDay ?? sharedVolume,
      volumeAssumed: action.volumePerDay === undefined && volumeGiven === undefined,
      existing: existingFor(action, existingAll, factsOf(options.code, action.name)),
      ...(options.brokers?.[action.name] ? { broker: options.brokers[action.name]! } : {}),
      ...(options.forms?.[action.name] ? { forms: options.forms[action.name]! } : {}),
      ...(factsOf(options.code, action.name) ? { facts: factsOf(options.code, action.name)! } : {}),
    }),
  );
  for (const action of config.actions) {
    // A sender the tool knows nothing of: the id it keys on is the configured field, which nothing here has checked.
    if (action.trigger === 'webhook' && action.provider === undefined) {
      const from = (action.key?.from ?? ['id']).map((field) => `\`${field}\``).join(' + ');
      assumptions.push(`${action.name}: the tool does not know its sender, so the event id its deliveries are keyed by is assumed to be ${from} in the body. Check the sender's payload: where it carries no such id, a resend cannot be told from a new event (genericHmacSource answers such a delivery 400 rather than apply it unkeyed). Set key.from in the config to the field that identifies one delivery, or read a delivery-id header with genericHmacSource's eventId: { header } (TRIGGERS.md).`);
    }
    if (action.trigger !== 'http' && action.key?.source === 'client') {
      assumptions.push(`${action.name}: the configuration asks for a client key, but a ${action.trigger === 'webhook' ? 'webhook sender' : action.trigger === 'consumer' ? 'broker' : 'scheduler'} sends no Idempotency-Key header, so the key is derived from ${action.trigger === 'webhook' ? 'the event id' : action.trigger === 'consumer' ? 'the message id' : 'the job name and scheduled slot'} instead.`);
    }
  }
  const proposedSagas: ProposedSaga[] = actions.flatMap((action) => {
    const facts = factsOf(options.code, action.name);
    const saga = facts ? proposeSaga({ name: action.name, slug: action.slug, configuredSteps: action.steps.length }, facts) : undefined;
    return saga ? [saga] : [];
  });
  const spans = new Map((options.code ?? []).flatMap((facts) => (facts.spans ? [[facts.action, facts.spans] as const] : [])));
  const findings = buildFindings(options.findings ?? [], actions, spans);
  for (const action of actions) action.findings = findings.filter((f) => f.actions.includes(action.name));
  for (const action of actions) {
    if (action.durationAssumed) {
      assumptions.push(`${action.name}: no expected duration was given; ${Math.round(action.expectedDurationMs / 100) / 10} s is assumed for ${/^[aeiou]/i.test(action.triggerLabel) || action.trigger === 'http' ? 'an' : 'a'} ${action.trigger === 'http' ? 'HTTP endpoint' : action.triggerLabel.toLowerCase()}${action.provider ? ' that calls a provider' : ''}.`);
    }
  }
  // A NestJS resolver goes through the same interceptor as a route, answered the GraphQL way (nestjs.ts, resolve()).
  for (const action of actions) {
    if (config.stack.framework !== 'nestjs' || factsOf(options.code, action.name)?.graphql !== 'nestjs') continue;
    const key = action.key.source === 'client' ? "takes the Idempotency-Key header from the HTTP request in the GraphQL context and fingerprints the mutation's arguments" : "derives the key from the mutation's arguments and fingerprints them";
    assumptions.push(`${action.name} is a GraphQL mutation (a NestJS resolver method, protected by marking it @Idempotent(ACTIONS.${action.codeName})): the interceptor ${key}. A refusal or conflict is a GraphQL error carrying the problem (its status in the error's extensions), and a repeat gets the resolver's recorded result as JSON (dates as strings, no Idempotent-Replayed header), not recorded response bytes. One key covers one protected mutation, so each is sent in its own request.`);
  }
  if (retention.raised) assumptions.push(`Retention was raised from ${config.retention} to ${retention.label} (see Partial Failure Recovery for why).`);
  assumptions.push(...config.assumptions);

  const sagas: SagaDesign[] = actions
    .filter((action) => action.steps.length > 1)
    .map((action) => ({
      action: action.name,
      slug: action.slug,
      steps: action.steps,
      resume: `One row per step in the step table, keyed by the outer key and the step number. A retry of ${action.name} walks the steps in order and skips every step already marked DONE, so it resumes at the first incomplete one.`,
      compensation: compensationText(action.steps),
    }));

  const storage = buildStorage(config);
  const cleanup = buildCleanup(retention.effectiveMs, storage.highVolume, stack.storeDatabase);
  const detection = decideDetection(config, stack);
  // A worker's texts speak of acknowledgements and slots, in the terms of the brokers its consumers use.
  const worker = stack.worker ? workerKinds(actions, config.stack.broker) : undefined;
  const responses = buildResponsePolicy(config, actions, stack.storeDatabase, stack.plain === true, worker);
  const providers = buildProviders(config, actions);
  const ctx = { actions, responses, retention, storage, providers, sagas, stack, cleanup, detection };
  const antiPatterns = selectAntiPatterns({ config, stack, actions, highVolume: storage.highVolume });
  const tests = buildTests(ctx);

  // The flowchart pays off once there is more than one path a reader has to hold in their head;
  // a single quick HTTP action with no provider is covered by the response table alone.
  const movingParts = actions.length + providers.length + sagas.length + (config.inFlight === 'wait' ? 1 : 0) + (actions.some((a) => a.heartbeatMs) ? 1 : 0);
  const flowchart = movingParts >= 2 || stack.agnostic;
  const model: DesignModel = {
    title: config.title ?? 'Idempotency design',
    generatedOn: options.now.toISOString().slice(0, 10),
    stack,
    concurrency: { value: config.concurrency, ...concurrencyText(config.concurrency, stack.storeDatabase) },
    actions,
    keys: buildKeyPolicy(actions, stack.storeDatabase, stack.plain === true, worker),
    fingerprint: buildFingerprintPolicy(config, stack.plain === true, worker),
    lock: buildLockPolicy(config, stack, actions),
    retention,
    detection,
    responses,
    providers,
    sagas,
    proposedSagas,
    storage,
    cleanup,
    security: buildSecurity(ctx),
    metrics: buildMetrics(ctx),
    tests,
    buildOrder: buildBuildOrder(ctx),
    runbook: buildRunbook(ctx),
    antiPatterns,
    assumptions,
    existingProtection: existingAll,
    reviewed: stillUnprotected(options.reviewed ?? [], config.actions),
    findings,
    codeAudited: options.findings !== undefined,
    constraints: [],
    diagrams: {
      flowchart,
      flowchartReason: flowchart
        ? `${movingParts} moving parts (actions, providers, sagas, lease renewal) make the decision paths worth a picture.`
        : 'One short action with no provider: the response table above says everything a flowchart would.',
    },
  };
  model.constraints = checkConstraints(model);
  return model;
}

/**
 * Protection credited to one action: inside its handler and the helpers it reaches when the code was followed (with
 * the evidence's location), else anywhere in its handler's file.
 */
function existingFor(action: Config['actions'][number], existing: readonly ExistingProtection[], facts: ActionCodeFacts | undefined): string[] {
  const spans = facts?.spans ?? [];
  if (spans.length > 0) {
    return existing
      .filter((item) => spans.some((span) => span.file === item.file && item.line >= span.from && item.line <= span.to))
      .map((item) => `${item.mechanism}: ${item.detail} (${item.file}:${item.line})`);
  }
  return existing.filter((item) => action.source !== undefined && action.source.startsWith(item.file)).map((item) => `${item.mechanism}: ${item.detail}`);
}

function factsOf(code: readonly ActionCodeFacts[] | undefined, name: string): ActionCodeFacts | undefined {
  return code?.find((facts) => facts.action === name);
}

function compensationText(steps: SagaDesign['steps']): string {
  const undo = [...steps]
    .reverse()
    .filter((step) => step.compensation)
    .map((step) => `${step.compensation} (undoes ${step.name})`);
  if (undo.length === 0) return 'No step declares a compensation: a permanent failure leaves completed steps in place and raises an alert for manual handling.';
  return `When a step fails permanently, the compensations of the steps already done run in reverse order: ${undo.join(', then ')}. Each compensation has its own sub-key, so a crash during compensation resumes it without undoing twice.`;
}

function collectExisting(inspection: InspectionInput | undefined): ExistingProtection[] {
  if (!inspection) return [];
  return creditedFindings(inspection.findings)
    .map((finding) => ({
      file: finding.file,
      line: finding.line,
      mechanism: finding.mechanism ?? (finding.kind === 'payment' ? 'provider-key' : 'existing'),
      detail: finding.detail ?? finding.id,
    }))
    .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}
