import { describeDuration } from '../../config/duration.js';
import { httplessKinds } from '../../model/httplessActions.js';
import { describeBytes } from '../../model/policies.js';
import { STORE_FACTS } from '../../model/storeFacts.js';
import { andList, DATABASE_LABELS, TRANSPORT_LABELS, TRIGGER_LABELS, transportName, transportParts } from '../../model/labels.js';
import type { ActionDesign, DesignModel, ReviewedCandidate } from '../../model/types.js';
import { formatProbability } from '../../model/uniqueness.js';
import type { CodeSample } from '../code/index.js';
import type { CodeSamples, FigureRef } from './buildDocument.js';
import { cell, code, md, strong } from './inline.js';
import { githubSlug, type Block, type DeliverableId, type Inline, type Section } from './types.js';

const sec = (ms: number) => describeDuration(ms);

function section(number: number, title: string, summary: string, blocks: Block[]): Section {
  const heading = number > 0 ? `${number}. ${title}` : title;
  return { id: githubSlug(heading), number, title, summary, blocks };
}

function heading(text: string, deliverable?: DeliverableId): Block {
  return { type: 'heading', text, id: githubSlug(text), deliverable };
}

const p = (...content: Inline[]): Block => ({ type: 'p', content });
const list = (items: Inline[][], ordered = false): Block => ({ type: 'list', items, ordered });
const table = (columns: string[], rows: Inline[][][]): Block => ({ type: 'table', columns, rows });

/** An excerpt of a generated file, titled with the path it is generated at. */
function sampleBlock(sample: CodeSample): Block {
  return { type: 'code', language: sample.language, code: sample.code, title: sample.path };
}

/** The block for an excerpt, or what the section says when the scaffolding has no such file. */
const sampleOr = (sample: CodeSample | undefined, missing: () => Block[]): Block[] => (sample ? [sampleBlock(sample)] : missing());

function where(action: ActionDesign): Inline[] {
  return action.source ? [code(action.source)] : ['not located in code'];
}

/** The route, or for a GraphQL mutation, tRPC procedure or Server Action what it is and how it is reached. */
function routeOf(action: ActionDesign): Inline[] {
  if (action.transport) {
    const { before, after } = transportParts(action.transport);
    return [before, code(transportName(action)), after];
  }
  return [action.route ? code(action.route) : '—'];
}

/** An action switched to log-only in the config: what the generated core does with it (core.ts beginLogOnly). */
const LOG_ONLY_ROLLOUT =
  'Log-only ("rollout": "log-only" in the config): nothing is refused or replayed yet. Every call runs; the first with a key is claimed and recorded in lease mode (the runtime mode above applies once enforced), and a duplicate, a refusal or a store outage runs anyway and is counted in idempotency_log_only_total. Its generated test suite, which asserts enforcement, is skipped meanwhile. Remove "rollout" and generate again to enforce.';

export function sectionsFor(model: DesignModel, samples: CodeSamples, figures: readonly FigureRef[]): Section[] {
  return [
    overview(model),
    actionAnalysis(model),
    keyDesign(model),
    fingerprinting(model, samples),
    concurrency(model, samples, figures),
    partialFailure(model, samples),
    payments(model),
    sagas(model, figures),
    security(model),
    antiPatterns(model),
    monitoring(model, samples),
    testScenarios(model, samples),
    buildOrder(model),
    runbook(model),
  ];
}

/** What the design is written for; a partly known stack names the parts that were given, which the anti-patterns then address. */
function stackSummary(s: DesignModel['stack']): string {
  const language = s.language === 'typescript' ? 'TypeScript' : 'JavaScript';
  if (!s.agnostic) return `${language}, ${s.frameworkLabel}, ${s.databaseLabel}, ${s.brokerLabel}, tests in ${s.testFrameworkLabel}`;
  if (s.framework === 'unknown' && s.database === 'unknown') return `Technology-agnostic; PostgreSQL reference schema, ${language} samples`;
  const framework = s.framework === 'unknown' ? 'any framework' : s.frameworkLabel;
  const database = s.database === 'unknown' ? 'PostgreSQL reference schema' : s.databaseLabel;
  return `Technology-agnostic where not given; ${language} samples, ${framework}, ${database}`;
}

function overview(model: DesignModel): Section {
  const s = model.stack;
  const blocks: Block[] = [
    p(
      `This design makes ${model.actions.length === 1 ? 'one critical action' : `${model.actions.length} critical actions`} safe to retry: `,
      ...joinInline(model.actions.map((a) => code(a.name))),
      s.worker
        ? `. Each message or scheduled run derives its key (the message id, or the job name and the slot it was scheduled for); the first delivery claims it in ${s.databaseLabel} ${s.claimIn}, runs once, and records it before the message is acknowledged; every later delivery of the same key is acknowledged as a duplicate instead of a second execution.`
        : s.plain
        ? `. Each call carries (or derives) an idempotency key; the first attempt claims it in ${s.databaseLabel} ${s.claimIn}, runs once, and stores its result before returning it; every later attempt with the same key gets that stored result instead of a second execution.`
        : `. Each request carries (or derives) an idempotency key; the first attempt claims it in ${s.databaseLabel} ${s.claimIn}, runs once, and stores its response before answering; every later attempt with the same key gets that stored response instead of a second execution.`,
    ),
    table(['Aspect', 'Decision'], [
      [cell('Stack'), cell(stackSummary(s))],
      ...(model.scaffold ? [[cell('Generated code'), generatedCode(model.scaffold)]] : []),
      [cell('Concurrency'), cell(`${model.concurrency.label}. ${model.concurrency.consequence}`)],
      [cell('Atomic claim'), cell(s.claimPrimitive)],
      [cell('Lease per action'), cell(model.actions.map((a) => `${a.name} ${sec(a.lockTimeoutMs)}`).join(', '))],
      [cell('Key retention'), cell(`${sec(model.retention.effectiveMs)}${model.retention.raised ? ' (raised from the requested value, see section 5)' : ''}`)],
      s.worker
        ? [cell('Same message id, different payload'), cell('A duplicate: the id decides, the handler does not run')]
        : [cell('Reused key, different request'), s.plain ? cell(code('MismatchError'), ' thrown') : cell(`${model.responses.mismatchStatus} problem+json`)],
      [cell('Duplicate detection'), cell(model.detection.summary)],
    ]),
  ];
  if (model.assumptions.length > 0) {
    blocks.push(heading('Assumptions'));
    blocks.push(list(model.assumptions.map((text) => [text])));
  }
  if (model.existingProtection.length > 0) {
    blocks.push(heading('Protection already in the code'));
    blocks.push(p('The codebase already guards some paths; the design keeps these and builds on them rather than replacing them.'));
    blocks.push(table(['Where', 'Mechanism', 'Detail'], model.existingProtection.map((e) => [cell(code(`${e.file}:${e.line}`)), cell(e.mechanism), cell(e.detail)])));
  }
  blocks.push(...findingsBlocks(model));
  blocks.push(heading('Constraint checklist'));
  blocks.push(p('Each testable constraint of the specification, with the part of this design that carries it.'));
  blocks.push(
    table(
      ['Constraint', 'Evidence in this design'],
      model.constraints.map((c) => [cell(c.statement), cell(c.satisfied ? c.evidence : `Not met: ${c.evidence}`)]),
    ),
  );
  return section(0, 'Overview', 'What is protected, the stack, the key decisions and the assumptions.', blocks);
}

/** Where the code this document shows lives; every code block is an excerpt of one of these files. */
function generatedCode(facts: NonNullable<DesignModel['scaffold']>): Inline[] {
  const inDir = facts.files.filter((file) => file.startsWith(`${facts.dir}/`)).length;
  const count = `${inDir} file${inDir === 1 ? '' : 's'}`;
  return facts.written
    ? cell(`${count} in `, code(facts.dir), '; every code block below is an excerpt of one of them, under its path.')
    : cell(`none written: scaffolding is off in the config. The code blocks below are excerpts of the ${count} that `, code('idempotency-builder generate'), ' writes to ', code(facts.dir), ' once it is on.');
}

const SEVERITY_LABEL = { error: 'Error', warning: 'Warning', note: 'Note' } as const;

/** The findings rules' verdict on the code: every finding with where it is, how to fix it and whether it is accepted. */
function findingsBlocks(model: DesignModel): Block[] {
  const blocks: Block[] = [heading('Findings in the code')];
  if (!model.codeAudited) {
    blocks.push(p('This design was made from the configuration alone, so the code was not checked. Run ', code('idempotency-builder audit'), ' in the project to list provider calls without keys, webhooks without event-id dedupe and the other defects this design assumes absent.'));
    return blocks;
  }
  if (model.findings.length === 0) {
    blocks.push(p('The findings rules found nothing to fix in the code.'));
    return blocks;
  }
  const open = model.findings.filter((f) => f.status === 'open');
  blocks.push(p(`${model.findings.length} finding${model.findings.length === 1 ? '' : 's'} in the code (${open.length} open). Each is something this design relies on being fixed; the fix says how.`));
  blocks.push(
    table(
      ['Severity', 'Where', 'Finding', 'Fix', 'Status'],
      model.findings.map((f) => [cell(SEVERITY_LABEL[f.severity]), cell(code(f.location)), cell(strong(f.title), '. ', ...md(f.message)), md(f.fix), cell(f.status)]),
    ),
  );
  return blocks;
}

function firstSentence(text: string): string {
  const end = text.indexOf('. ');
  return end === -1 ? text : text.slice(0, end + 1);
}

function joinInline(parts: Inline[]): Inline[] {
  const out: Inline[] = [];
  parts.forEach((part, index) => {
    if (index > 0) out.push(index === parts.length - 1 ? ' and ' : ', ');
    out.push(part);
  });
  return out;
}

/**
 * The action's story from its code, as prose: what the handler does, what a duplicate costs, how the key is found,
 * what protects it already and what the findings say. Backtick spans are our own template's code spans.
 */
function codeParagraph(a: ActionDesign): string {
  const parts = [a.executes, ` Run twice: ${lowerFirst(a.duplicateImpact)}`, ` Key source (${a.key.sourceLabel.toLowerCase()}): ${a.key.carrier}.`];
  if (a.existing.length > 0) parts.push(` Already in place: ${a.existing.join('; ')}.`);
  const open = a.findings.filter((f) => f.status === 'open');
  if (open.length > 0) parts.push(` ${open.length === 1 ? 'One finding needs fixing' : `${open.length} findings need fixing`} first: ${open.map((f) => `${f.title.toLowerCase()} at \`${f.location}\``).join('; ')} (details below).`);
  return parts.join('');
}

const lowerFirst = (text: string) => (/^(A|An|The|Two|Applying|Handling|Running|Duplicate)\b/.test(text) ? text[0]!.toLowerCase() + text.slice(1) : text);

function actionAnalysis(model: DesignModel): Section {
  const blocks: Block[] = [
    heading('Action map', 'action-map'),
    table(
      ['Action', 'Trigger', 'Route / source', 'Duplicate impact', 'Key source', 'Recovery path'],
      model.actions.map((a) => [
        cell({ link: { href: `#${githubSlug(a.name)}`, text: a.name } }),
        cell(a.triggerLabel),
        cell(...routeOf(a), a.source ? ' · ' : '', ...(a.source ? [code(a.source)] : [])),
        cell(...md(a.duplicateImpact)),
        cell(...md(`${a.key.sourceLabel}: ${a.key.carrier}`)),
        cell(firstSentence(a.recovery)),
      ]),
    ),
    ...reviewedBlocks(model.reviewed),
  ];
  for (const a of model.actions) {
    blocks.push(heading(a.name));
    if (a.code) blocks.push(p(...md(codeParagraph(a))));
    blocks.push(
      table(['', ''], [
        [cell(strong('What executes')), cell(...md(a.executes))],
        [cell(strong('Where')), cell(...routeOf(a), ' in ', ...where(a))],
        [cell(strong('Duplicate impact')), cell(...md(a.duplicateImpact))],
        [cell(strong('Retry sources')), cell(a.retrySources.map((r) => `${r.label}: ${r.how}`).join('; '))],
        [cell(strong('Significant fields')), cell(...joinInline(a.significantFields.map((f) => code(f))))],
        [cell(strong('Failure recovery')), cell(a.recovery)],
        [cell(strong('Runtime mode')), cell(a.modeReason)],
        ...(a.rollout === 'log-only' ? [[cell(strong('Rollout')), cell(LOG_ONLY_ROLLOUT)]] : []),
        ...(a.existing.length > 0 ? [[cell(strong('Already in place')), cell(a.existing.join('; '))]] : []),
        ...(a.findings.length > 0 ? [[cell(strong('Findings in its code')), a.findings.flatMap((f, i) => [...(i > 0 ? [' '] : []), `${SEVERITY_LABEL[f.severity]} at `, code(f.location), ': ', ...md(f.message), ' Fix: ', ...md(f.fix)])]] : []),
      ]),
    );
  }
  return section(1, 'Action Analysis', 'Each protected action: what runs, what a duplicate costs, where retries come from, and how it recovers.', blocks);
}

/** A design that lists two hundred routes is one nobody reads; the rest are counted, and `inspect` lists them all. */
const MAX_REVIEWED_ROWS = 40;

/** What inspection found and the actions leave out, with why: the reader sees what was looked at, not only the choice. */
function reviewedBlocks(reviewed: readonly ReviewedCandidate[]): Block[] {
  if (reviewed.length === 0) return [];
  const shown = reviewed.slice(0, MAX_REVIEWED_ROWS);
  const rest = reviewed.length - shown.length;
  return [
    heading('Found in the code, not protected'),
    p(
      `Inspection also found ${reviewed.length === 1 ? 'this handler' : `these ${reviewed.length} handlers`}, which the design leaves unprotected for the reason given. To protect one, add it to `,
      code('actions'),
      ' in ',
      code('idempotency.config.json'),
      ' under the name shown (its trigger, route and source as here) and run ',
      code('idempotency-builder generate'),
      '.',
    ),
    table(
      ['Handler', 'Trigger', 'Route / source', 'Why it is not protected'],
      shown.map((r) => [
        cell(code(r.name)),
        cell(r.transport && r.trigger === 'http' ? TRANSPORT_LABELS[r.transport] : TRIGGER_LABELS[r.trigger]),
        cell(...reviewedRoute(r), ' · ', code(r.source)),
        cell(upperFirst(r.reason)),
      ]),
    ),
    ...(rest > 0 ? [p(`And ${rest} more; `, code('idempotency-builder inspect'), ' lists every one.')] : []),
  ];
}

function reviewedRoute(r: ReviewedCandidate): Inline[] {
  if (r.transport && r.trigger === 'http') {
    const { before, after } = transportParts(r.transport);
    return [before, code(transportName({ name: r.name, ...(r.route !== undefined ? { route: r.route } : {}) })), after];
  }
  return [r.route ? code(r.route) : '—'];
}

const upperFirst = (text: string) => (text ? text[0]!.toUpperCase() + text.slice(1) : text);

/**
 * GraphQL mutations, tRPC procedures and Server Actions have no route: the runtime hashes the method and path of
 * their configured route all the same (ACTIONS.<action>.method, or POST, and .route), as a label naming them.
 */
function labelRoutes(actions: readonly ActionDesign[]): Block[] {
  const labelled = actions.filter((a) => a.transport);
  if (labelled.length === 0) return [];
  const items = labelled.map((a): Inline[] => [strong(a.name), ': ', code(a.method ?? 'POST'), ' and ', code(a.path ?? a.route ?? a.name)]);
  return [
    p(`${labelled.length === 1 ? 'This action has' : 'These actions have'} no route of ${labelled.length === 1 ? 'its' : 'their'} own (a GraphQL mutation, tRPC procedure or Server Action is not a request to a path of its own), so the method and path of the configured route are hashed as a label that names the action:`),
    list(items),
  ];
}

function keyDesign(model: DesignModel): Section {
  const k = model.keys;
  const blocks: Block[] = [
    heading('Key format'),
    model.stack.worker
      ? p(`The logical key is {scope}_{action}_{intent}. The scope and action are ${STORE_FACTS[model.stack.storeDatabase].keyParts}, so what a consumer reads from the message (its id), or a cron job takes from its schedule (the slot), is only the intent part; no header is involved.`)
      : model.stack.plain
      ? p(
          `The logical key is {scope}_{action}_{intent}. The scope and action are ${STORE_FACTS[model.stack.storeDatabase].keyParts}, so what the caller passes as the call's `,
          code('key'),
          ' (often read from an ',
          code(k.header),
          ' header) is only the intent part.',
        )
      : p(
          `The logical key is {scope}_{action}_{intent}. The scope and action are ${STORE_FACTS[model.stack.storeDatabase].keyParts}, so what the client sends in the `,
          code(k.header),
          ' header is only the intent part',
          model.actions.some((a) => a.transport === 'server-action') ? ' (a Server Action gets that part as its first argument instead).' : '.',
        ),
    table(
      ['Action', 'Format', 'Filled-in example'],
      model.actions.map((a) => [cell(a.name), cell(code(a.key.format)), cell(code(a.key.example))]),
    ),
    { type: 'callout', tone: 'warning', content: [k.timeVaryingWarning] },
    heading('Scope boundary'),
    table(['Action', 'Scope', 'Why'], model.actions.map((a) => [cell(a.name), cell(a.scopeLabel), cell(a.scopeReason)])),
    heading('Validation'),
    list(k.validation.map((v) => [v])),
    model.stack.worker
      ? p(...uniquenessClaim(model), '; the consumer handler and the cron guard hash any id that does not fit the key shape, so every key the store sees is short printable ASCII; see the DDL in section 4.')
      : p(...uniquenessClaim(model), `; the ${model.stack.plain ? 'wrapper' : 'middleware'} enforces the key shape (`, code(k.charsetPattern), ') before touching the store; see the DDL in section 4.'),
    heading('Who generates it'),
    table(['Action', 'Source', 'How'], model.actions.map((a) => [cell(a.name), cell(a.key.sourceLabel), cell(...md(a.key.carrier))])),
    p(k.generation),
    ...(k.formGeneration ? [p(k.formGeneration)] : []),
    heading('Uniqueness assessment'),
    table(
      ['Action', 'Key space', 'Live keys in window', 'Collision chance', 'Verdict'],
      model.actions.map((a) => [
        cell(a.name),
        cell(`${a.uniqueness.bits} bits`),
        cell(a.uniqueness.keysInWindow.toLocaleString('en-US')),
        cell(formatProbability(a.uniqueness.collisionProbability)),
        cell(a.uniqueness.verdict),
      ]),
    ),
    list(model.actions.map((a) => [strong(a.name), `: ${a.uniqueness.explanation}`])),
  ];
  return section(2, 'Idempotency Key Design', 'Key format with examples, scope, validation, who generates keys, and whether they are unique enough.', blocks);
}

function fingerprinting(model: DesignModel, samples: CodeSamples): Section {
  const f = model.fingerprint;
  const blocks: Block[] = [
    p(`A fingerprint tells "the same request again" apart from "a different request that reuses the key". It is ${f.algorithm}, ${f.encoding}, over ${f.canonicalization}`),
    table(
      ['Action', 'Hashed (significant)', 'Not hashed, and why'],
      model.actions.map((a) => [
        cell(a.name),
        cell(...joinInline(a.significantFields.map((field) => code(field)))),
        cell(a.excludedFields.map((e) => `${e.field}: ${e.reason}`).join('; ')),
      ]),
    ),
    p('Each field is significant because changing it changes what the action does (how much, to whom, for which object). The method and route template are hashed too, so a key reused on another endpoint is a mismatch, not a replay.'),
    ...labelRoutes(model.actions),
    heading('Mismatch behaviour'),
    model.stack.plain || model.stack.worker
      ? p(`Same key, different fingerprint: ${f.mismatchBody}`)
      : p(`Same key, different fingerprint: ${f.mismatchStatus} with ${f.mismatchBody} ${f.mismatchStatus === 422 ? 'The IETF Idempotency-Key draft uses 422 for this case; set conflictStatus to 409 to keep the original contract.' : '409 follows the original contract; the IETF draft would use 422.'}`),
    p(`Comparison: ${f.comparison} The algorithm id `, code(f.algorithmId), ' is stored with each record, so the canonical form can change later without invalidating live keys.'),
    heading('Fingerprint utility', 'fingerprint-utility'),
    ...sampleOr(samples.fingerprint, () => []),
  ];
  return section(3, 'Request Fingerprinting', 'Which fields are hashed per action, which are not and why, the algorithm, and what a mismatch returns.', blocks);
}

function concurrency(model: DesignModel, samples: CodeSamples, figures: readonly FigureRef[]): Section {
  const l = model.lock;
  const flow = figures.find((f) => f.kind === 'flowchart');
  const blocks: Block[] = [
    heading('Atomic claim'),
    p(`The key is claimed with ${l.claim}. ${STORE_FACTS[model.stack.storeDatabase].uniqueness
      ? `${STORE_FACTS[model.stack.storeDatabase].uniqueness}, so a second claim of a live key is impossible: of two concurrent claims, the second one finds the first one's record.`
      : "The primary key makes a second claim of a live key physically impossible: whichever statement commits second sees the first one's row."}`),
    heading('Lock timeout'),
    table(['Action', 'Expected duration', 'Lease', 'Heartbeat', 'Justification'], model.actions.map((a) => [
      cell(a.name),
      cell(`${sec(a.expectedDurationMs)}${a.durationAssumed ? ' (assumed)' : ''}`),
      cell(sec(a.lockTimeoutMs)),
      cell(a.heartbeatMs ? `every ${sec(a.heartbeatMs)}` : 'not needed'),
      cell(a.lockJustification),
    ])),
    heading('Contested keys'),
    p(l.contested),
    heading('Clock skew'),
    p(l.clock, ` The lease still carries a ${sec(l.skewBufferMs)} buffer for pauses between a worker's last heartbeat and its database round trip.`),
    heading('The ABA problem'),
    p(l.reclaim),
    p(l.aba),
    heading('Idempotency store DDL', 'store-ddl'),
    p(storeCodeIntro(model)),
    ...sampleOr(samples.ddl, () => []),
    heading('Response rules'),
    table(['Situation', model.stack.worker ? 'What the consumer or job does' : model.stack.plain ? 'What the caller gets' : 'Response', 'Stored?'], model.responses.rules.map((r) => [cell(r.situation), cell(r.response), cell(r.stored)])),
  ];
  blocks.push(heading('Flow diagrams', 'flow-diagrams'));
  if (flow) {
    blocks.push(p(`${model.stack.worker ? 'The decision flow the consumer handler and the cron guard share: both go through the same claim in the core below.' : model.stack.plain ? 'The decision flow of a call as implemented by the plain idempotent(fn) wrapper below.' : 'The request-handling decision flow as implemented by the middleware below.'} ${model.diagrams.flowchartReason}`));
    blocks.push({ type: 'figure', figureId: flow.id });
  } else {
    blocks.push(p(`No request-handling flowchart: ${model.diagrams.flowchartReason}`));
  }
  if (model.sagas.length > 0) {
    blocks.push(p(`The saga state machine${model.sagas.length > 1 ? 's are' : ' is'} in section 7.`));
  }
  blocks.push(heading('Middleware', 'middleware'));
  // The plain wrapper (every action a GraphQL mutation, tRPC procedure, Server Action, consumer or job) returns, it does not respond.
  blocks.push(
    p(
      model.stack.worker
        ? `The lock-check-process-store flow of the core that the ${httplessKinds(model.actions)} go through (consumers/handler.ts and cron/guard.ts call it): the work is recorded before the message is acknowledged, and the store call is bounded so an outage throws StoreUnavailableError, never a hang.${samples.middleware?.path.endsWith('plain.ts') || samples.middleware?.path.endsWith('plain.js') ? ' The code below is the plain idempotent(fn) wrapper over the same core, for work that is neither a message nor a schedule.' : ''}`
        : model.stack.plain
        ? `The lock-check-process-store flow of the plain idempotent(fn) wrapper that the ${httplessKinds(model.actions)} call: the result is stored before it is returned, and the store call is bounded so an outage throws StoreUnavailableError, never a hang.`
        : `The lock-check-process-store flow for ${model.stack.frameworkLabel}: the response is persisted before the first byte is sent, and the store call is bounded so an outage becomes a 503, never a hang.`,
    ),
  );
  blocks.push(...sampleOr(samples.middleware, () => []));
  const beyondHttp = model.actions.filter((a) => a.trigger !== 'http');
  if (beyondHttp.length > 0) {
    // The scaffold wires these through their trigger's processor, not this middleware (index.ts has no entry for them).
    blocks.push(p(
      'Not behind this middleware: ',
      ...joinInline(beyondHttp.map((a) => [a.name, ` (${TRIGGER_ENTRY[a.trigger] ?? a.trigger})`].join(''))),
      beyondHttp.length === 1
        ? '. Its sender never sends an Idempotency-Key header, so it is keyed by what the sender carries and enters through its own processor over the same core and store (TRIGGERS.md in the scaffold).'
        : '. Their senders never send an Idempotency-Key header, so each is keyed by what it carries and enters through its own processor over the same core and store (TRIGGERS.md in the scaffold).',
    ));
  }
  return section(4, 'Concurrency Control', 'The atomic claim, lease lengths and why, contested keys, clock skew, ABA, the DDL and the middleware.', blocks);
}

/** How the store makes a second record for a key impossible, in the words of the generated store's own code. */
function uniquenessClaim(model: DesignModel): Inline[] {
  const reference = model.scaffold?.reference !== undefined;
  const store = reference ? 'postgres' : model.stack.storeDatabase;
  const { uniqueness } = STORE_FACTS[store];
  if (uniqueness) return [uniqueness];
  const column = store === 'mysql' || store === 'mariadb' ? '`key`' : 'key';
  return ['The database enforces uniqueness with ', code(`PRIMARY KEY (scope, ${column})`)];
}

/** What the store code below is: the project's own store, or the reference target's where the stack has none. */
function storeCodeIntro(model: DesignModel): string {
  const reference = model.scaffold?.reference;
  // The plain wrapper's reference target on the project's own PostgreSQL is not a stand-in: nothing to port.
  if (reference && model.stack.database !== 'postgres') return `The stack has no scaffolding target of its own, so this is the store of the reference target (${reference}) the generated code runs on; port its constraints to your database as they are. The PRIMARY KEY and CHECK constraints are what make double processing impossible, whatever the application does.`;
  const { schemaIntro } = STORE_FACTS[model.stack.storeDatabase];
  if (schemaIntro) return schemaIntro;
  return `Ready to run on ${model.stack.databaseLabel}. The PRIMARY KEY and CHECK constraints are what make double processing impossible, whatever the application does.`;
}

function partialFailure(model: DesignModel, samples: CodeSamples): Section {
  const r = model.retention;
  const longest = [...model.actions].sort((a, b) => b.lockTimeoutMs - a.lockTimeoutMs)[0]!;
  const d = model.detection;
  const transactional = model.actions.filter((a) => a.mode === 'transactional');
  const blocks: Block[] = [
    heading('Transactional or lease: how each action holds its key'),
    p(
      model.stack.transactional
        ? `Where every effect of an action is a write to the database that holds the store, one transaction covers the claim, those writes and the completion: nothing is visible until it commits, and a crash, a thrown handler or a failed completion rolls all of it back, so the retry starts clean. Concurrent duplicates wait on ${model.stack.duplicateWaitsOn ?? "the key's unique index"} for at most the lock time-out below, then see the committed result (${model.stack.worker ? 'a duplicate' : 'replay'}) or ${model.stack.worker ? "get 'busy' (a message) or 'overlap' (a cron run)" : model.stack.plain ? 'get InFlightError' : 'get 409'}. Where an action reaches outside that database (a payment provider, e-mail, another service), no transaction can undo the effect; the claim commits first and a lease with a fencing token guards the run.`
        : `${upperFirst(STORE_FACTS[model.stack.storeDatabase].leaseOnly ?? `${model.stack.databaseLabel} has no transaction that could include an action's own writes`)}, so every action runs in lease mode: the claim commits first and a lease with a fencing token guards the run; every later write of the run (completion, lease extension, saga steps) is conditional on that token.`,
    ),
    list(model.actions.map((a) => [strong(a.name), `: ${a.modeReason}`])),
    heading('When the store or the completion fails'),
    table(
      model.stack.worker ? ['Failure', 'What the consumer or job does', 'Why that is safe'] : model.stack.plain ? ['Failure', 'What the caller gets', 'Why that answer is true'] : ['Failure', 'What the client gets', 'Why that answer is true'],
      [
        ...d.failures.map((f) => [cell(f.failure), cell(f.answer), cell(f.why)]),
        ...(transactional.length > 0
          ? [
              [
                cell(`Completion cannot be recorded, transactional mode (${transactional.map((a) => a.name).join(', ')})`),
                cell(model.stack.worker ? 'StoreUnavailableError ("not processed"; OutcomeUnknownError only if the COMMIT\'s own answer is lost): the message is not acknowledged, or the cron run fails' : model.stack.plain ? 'StoreUnavailableError ("not processed"); OutcomeUnknownError only if the COMMIT\'s own answer is lost' : '503 "not processed"; 503 "outcome unknown" only if the COMMIT\'s own answer is lost'),
                cell('The claim and the action\'s writes roll back together, so the retry executes once, cleanly.'),
              ],
            ]
          : []),
        ...(transactional.length < model.actions.length
          ? [
              [
                cell(`Completion cannot be recorded, lease mode (${model.actions.filter((a) => a.mode === 'lease').map((a) => a.name).join(', ')})`),
                cell(model.stack.worker ? `Retried with the same fencing token for ${sec(d.completionRetryMs)}, then OutcomeUnknownError: the message is not acknowledged (or the cron run fails); copies delivered meanwhile get 'busy' ('overlap')` : model.stack.plain ? `Retried with the same fencing token for ${sec(d.completionRetryMs)}, then OutcomeUnknownError ("retry later with the same key"), never StoreUnavailableError's "not processed"` : `Retried with the same fencing token for ${sec(d.completionRetryMs)}, then 503 "outcome unknown: retry later with the same key", never "not processed"`),
                cell('The action ran. The record stays PROCESSING under its lease (attempts counted); the retry that takes over after the lease sees attempt > 1 and sends the same derived provider keys, so the provider deduplicates. The outcome-unknown metric pages.'),
              ],
            ]
          : []),
        ...(model.stack.worker ? [] : [model.stack.plain
          ? [
              cell(`Result larger than ${describeBytes(model.responses.maxStoredResponseBytes)} as JSON`),
              cell('Returned once; a repeat with the key throws NotReplayableError'),
              cell('The record keeps a SHA-256 of the JSON, so the key stays completed: never a second execution.'),
            ]
          : [
              cell(`Response body larger than ${describeBytes(model.responses.maxStoredResponseBytes)}`),
              cell('Sent once; a retry with the key gets 409 response-not-replayable'),
              cell('The record keeps the status and a SHA-256 of the body, so the key stays completed: never a second execution.'),
            ]]),
      ],
    ),
    heading('Crash after the claim, before completion'),
    ...(transactional.length > 0
      ? [p(`Transactional actions (${transactional.map((a) => a.name).join(', ')}): the worker's connection closes with it, ${DATABASE_LABELS[model.stack.storeDatabase]} rolls back the claim and the action's writes, and the next attempt claims a fresh key at once.`)]
      : []),
    p(`Lease-mode actions: ${STORE_FACTS[model.stack.storeDatabase].crashedLease(model.actions.map((a) => `${a.name}: ${sec(a.lockTimeoutMs)}`).join(', '))} Recovery is automatic retry, and re-execution is safe because every downstream call carries a key derived from the local one.`),
    list(model.actions.map((a) => [strong(a.name), `: ${a.recovery}`])),
    heading('Action partially completed'),
    p(
      model.providers.length > 0
        ? model.scaffold?.reconcileJob
          ? `The dangerous case is a provider call that succeeded while the local write did not. The scaffold's reconciliation job (${model.scaffold.reconcileJob}; schedule it, for example every 15 minutes) goes over records still PROCESSING a minute after their lease lapsed (a crashed worker, or a completion that could not be recorded), looks each one up at the provider by the key derived for it (${model.providers.map((pr) => reconcileLookup(pr, model.scaffold!.reconcileLookups[pr.id])).join('; ')}), then takes the record over with a new fencing token and completes it with the provider's result, or releases it when the provider has nothing; a record the provider cannot answer for yet is left for the next run, and --dry-run only reports. The job only reads from the provider, and a retry sends the same derived key, so money never moves twice.`
          : `The dangerous case is a provider call that succeeded while the local write did not. The record stays PROCESSING with its lease; the next attempt (the client's retry, the provider's resend, the broker's redelivery) reclaims it once the lease lapses and calls the provider again with the same derived key (${model.providers.map((pr) => pr.label).join(', ')}), so the provider answers with its original result instead of acting twice, and the local record completes. Nothing polls the provider on its own: a record no one retries stays PROCESSING and raises the stuck-record alert, and the runbook's "Provider and local state disagree" entry settles it by hand.${model.stack.storeDatabase !== 'postgres' ? ` The scaffold writes no reconciliation job for ${model.stack.databaseLabel}: it finds stuck records through the store's listStuck, which only the PostgreSQL store implements.` : ''}`
        : 'Local side effects commit in the same transaction as the completion where they live in the same database. Effects outside it (e-mails, calls to other services) carry a key derived from the local one, so a re-execution after a crash is deduplicated downstream; where a downstream system cannot deduplicate, record "sent" before sending and reconcile on doubt.',
    ),
    heading('Failed for good, or still running elsewhere?'),
    p(
      longest.heartbeatMs
        ? `Age alone proves nothing. Long actions (${model.actions.filter((a) => a.heartbeatMs).map((a) => a.name).join(', ')}) renew their lease every ${sec(longest.heartbeatMs)}, so a record whose lease is still in the future belongs to a live worker however old it is; only a lapsed lease means the worker is gone.`
        : `Age alone proves nothing: a record is presumed dead only when its lease has lapsed, and the lease is sized from the action's expected duration. Actions that may run longer than a few times their expected duration must renew the lease with a heartbeat (the store exposes extend()).`,
    ),
    p(
      model.stack.worker
        ? "A transient failure releases the claim and leaves the message unacknowledged, so its redelivery runs again. A permanent one is a message that fails on its last attempt: the handler marks its record FAILED and the outcome 'dead' takes it off the queue, so a later copy is a duplicate and never runs. A cron run that throws releases its slot; the next fire of that slot runs it again."
        : model.stack.plain
        ? 'The wrapper stores only what the function returns: a permanent failure is stored and returned again to every repeat only when the function returns it as a value (for example { declined: true }). Anything the function throws, a permanent failure or a compensated saga\'s error included, releases the claim and reaches the caller, so the next retry runs the function again.'
        : 'A permanent failure (a definitive 4xx from the action, or a saga that compensated) is stored as a completed response and replayed; a transient one releases the claim so the retry runs again.',
    ),
    ...serverActionOutcomes(model.actions),
    heading('Key retention'),
    p(strong(`Retention: ${sec(r.effectiveMs)}.`), ` ${r.justification}`),
    ...(r.floors.length > 0 ? [table(['What needs the window', 'Minimum'], r.floors.map((f) => [cell(f.reason), cell(sec(f.ms))]))] : []),
    heading('Cleanup job', 'cleanup-job'),
    model.cleanup.job ? p(`${model.cleanup.strategy} Schedule: ${model.cleanup.scheduleLabel} (`, code(model.cleanup.schedule), `). ${model.storage.volumeNote}`) : p(model.cleanup.strategy),
    ...sampleOr(samples.cleanup, () => [p('The scaffolding has no cleanup job for this store: each record carries its retention as an expiry the store enforces itself (see the store code in section 4).')]),
  ];
  return section(5, 'Partial Failure Recovery', 'Crashes mid-action, half-finished side effects, telling dead workers from slow ones, retention and cleanup.', blocks);
}

/** Each non-HTTP trigger's entry point in the scaffold, and the key it uses. */
const TRIGGER_ENTRY: Partial<Record<string, string>> = {
  webhook: "webhook: the webhook processor after the signature check, keyed by the provider's event id",
  consumer: 'queue consumer: the consumer wrapper, keyed by the message id or business key, acknowledged after completion',
  cron: 'scheduled job: the slot guard, keyed by job name and scheduled slot',
};

/** How the reconciliation job finds a record's provider object (the key derived for it), naming the generated lookup. */
function reconcileLookup(provider: DesignModel['providers'][number], file: string | undefined): string {
  if (!file) return `${provider.label}: by hand, on the reference we sent`;
  if (provider.id === 'stripe') return `Stripe: a search by the metadata tag every create call carries, in ${file}`;
  if (provider.id === 'adyen') return `Adyen: the merchant reference, through the lookup you give ${file} over the notifications you stored (until then its records are left for you)`;
  if (provider.id === 'paypal') return `PayPal: the derived PayPal-Request-Id, through the lookup you give ${file} (until then its records are left for you)`;
  return `${provider.label}: through the lookup in ${file}`;
}

function payments(model: DesignModel): Section {
  const blocks: Block[] = [];
  if (model.providers.length === 0) {
    blocks.push(p('No payment provider is involved in these actions. If one is added, its native deduplication key must be derived from the local key, never generated fresh on a retry.'));
  } else {
    blocks.push(p(strong('Invariant:'), ' a provider key is always derived from the local idempotency key, never generated afresh on a retry, so the local store and the provider deduplicate the same logical request.'));
    blocks.push(table(['Provider', 'Native mechanism', 'Derived value', 'Example', 'Window'], model.providers.map((pr) => [
      cell(pr.label), cell(pr.mechanism), cell(pr.derivation), cell(code(pr.example)), cell(pr.windowLabel),
    ])));
    for (const pr of model.providers) {
      blocks.push(heading(`${pr.label} coordination`));
      blocks.push(p(pr.coordination, ` Used by ${pr.actions.join(', ') || 'no action yet'}.`));
    }
  }
  return section(6, 'Payment Provider Coordination', 'How each provider key is derived from the local key, with examples and retention windows.', blocks);
}

function sagas(model: DesignModel, figures: readonly FigureRef[]): Section {
  const blocks: Block[] = [];
  if (model.sagas.length === 0 && model.proposedSagas.length === 0) {
    blocks.push(p('No action here is a multi-step saga: each one commits its local effect in a single step. If an action grows into several external steps, give each step its own sub-key (outer key plus step number) in the step table, and draw its compensations before building them.'));
  }
  for (const saga of model.sagas) {
    blocks.push(heading(`${saga.action} saga`));
    blocks.push(table(['#', 'Step', 'Compensation', 'Sub-key example', 'Provider key'], saga.steps.map((s) => [
      cell(String(s.index)), cell(s.name), cell(s.compensation ?? 'none (last or irreversible)'), cell(code(s.subKeyExample)), cell(s.providerKeyExample ? code(s.providerKeyExample) : '—'),
    ])));
    blocks.push(p(saga.resume));
    blocks.push(p(saga.compensation));
    const figure = figures.find((f) => f.kind === 'saga' && f.action === saga.slug);
    if (figure) blocks.push({ type: 'figure', figureId: figure.id });
  }
  for (const saga of model.proposedSagas) {
    blocks.push(heading(`${saga.action}: saga proposed from the code`));
    blocks.push(table(['#', 'Step', 'Call in the code', 'Compensation'], saga.steps.map((s) => [
      cell(String(s.index)), cell(s.name), cell(code(s.call), ' at ', code(s.location)), s.compensation && s.compensationCall ? cell(s.compensation, ' (', code(s.compensationCall), ')') : cell('none: manual'),
    ])));
    blocks.push(p(saga.note));
  }
  return section(7, 'Multi-Step (Saga) Idempotency', 'Per-step sub-keys, resuming from the first incomplete step, and compensation in reverse.', blocks);
}

function security(model: DesignModel): Section {
  return section(8, 'Security', 'Scoping, timing safety, replay, guessability, rate limits, leakage and log hygiene.', [
    table(['Topic', 'Decision'], model.security.map((s) => [cell(strong(s.topic)), cell(s.decision)])),
  ]);
}

function antiPatterns(model: DesignModel): Section {
  return section(9, 'Anti-Patterns to Avoid', `The anti-patterns that apply to ${model.stack.frameworkLabel} on ${model.stack.databaseLabel} and what this design does instead.`, [
    table(['Anti-pattern', 'Why it fails', 'In this design'], model.antiPatterns.map((a) => [cell(strong(a.pattern)), cell(a.whyItFails), cell(a.here)])),
  ]);
}

function monitoring(model: DesignModel, samples: CodeSamples): Section {
  return section(10, 'Monitoring and Alerting', 'Metric names, types and alert thresholds, with Prometheus rules.', [
    table(['Metric', 'Type', 'Labels', 'Meaning', 'Alert'], model.metrics.map((m) => [
      cell(code(m.promName), ` (${m.name})`), cell(m.type), cell(m.labels.join(', ') || '—'), cell(m.meaning), cell(m.alert),
    ])),
    heading('Monitoring config', 'monitoring-config'),
    ...sampleOr(samples.monitoring, () => []),
  ]);
}

function testScenarios(model: DesignModel, samples: CodeSamples): Section {
  return section(11, 'Test Scenarios', 'Input, expected outcome and the invariant each scenario protects, including concurrent duplicates.', [
    table(['Scenario', 'Input', 'Expected', 'Verifies'], model.tests.map((t) => [cell(strong(t.name)), cell(t.input), cell(t.expected), cell(t.verifies)])),
    heading('Test suite skeleton', 'test-suite'),
    p(`In ${model.stack.testFrameworkLabel}, against ${STORE_FACTS[model.stack.storeDatabase].testTarget ?? `a real ${model.stack.databaseLabel}`} (never a mock: the constraint is what is being tested).`),
    ...sampleOr(samples.tests, () => []),
  ]);
}

function buildOrder(model: DesignModel): Section {
  return section(12, 'Build Order', 'Numbered steps, each safe to deploy on its own.', [
    heading('Build order steps', 'build-order'),
    table(['#', 'Step', 'What', 'Deployment safety'], model.buildOrder.map((b) => [cell(String(b.step)), cell(strong(b.title)), cell(b.detail), cell(b.safety)])),
    ...wiringBlocks(model),
  ]);
}

/** What `idempotency-builder apply` changed in the code, per action, and what it left to do by hand (with why). */
function wiringBlocks(model: DesignModel): Block[] {
  const wired = model.actions.filter((a) => a.wiring);
  if (wired.length === 0) return [];
  const at = (file: string | undefined, line: number | undefined): Inline[] => (file ? [code(line ? `${file}:${line}` : file), ': '] : []);
  return [
    heading('Wiring in your code'),
    p('Recorded by ', code('idempotency-builder apply'), ': the edits it made to your files, and the steps it left manual with the reason.'),
    table(
      ['Action', 'Applied', 'Still manual'],
      wired.map((a) => [
        cell(a.name),
        a.wiring!.applied.length === 0 ? cell('nothing') : oneALine(appliedEntries(a.wiring!.applied)),
        a.wiring!.manual.length === 0 ? cell('nothing') : oneALine(a.wiring!.manual.map((m): Inline[] => [...at(m.file, m.line), m.reason])),
      ]),
    ),
  ];
}

/** Entries of a table cell, one a line. */
const oneALine = (entries: readonly Inline[][]): Inline[] => entries.flatMap((parts, i) => (i === 0 ? parts : [{ br: true } as const, ...parts]));

/** A client edit of apply's: `CardForm sends the Idempotency-Key header from useIdempotencyKey() to POST /pay (line 22)`. */
const COMPONENT_EDIT = /^(the default component|\S+) (sends|passes) (.+) \(line (\d+)\)$/;

/**
 * The applied edits, one entry each, except the same client edit in many components (a frontend with a form per
 * payment method): one entry saying what they all do, then where (file:line and the component).
 */
function appliedEntries(applied: ReadonlyArray<{ file: string; summary: string }>): Inline[][] {
  const kindOf = (summary: string) => {
    const match = COMPONENT_EDIT.exec(summary);
    return match ? { component: match[1]!, kind: `${match[2] === 'sends' ? 'send' : 'pass'} ${match[3]!}`, line: match[4]! } : undefined;
  };
  const counts = new Map<string, number>();
  for (const edit of applied) {
    const kind = kindOf(edit.summary)?.kind;
    if (kind !== undefined) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  const done = new Set<string>();
  const entries: Inline[][] = [];
  for (const edit of applied) {
    const parsed = kindOf(edit.summary);
    const count = parsed ? (counts.get(parsed.kind) ?? 0) : 0;
    if (!parsed || count < 3) {
      entries.push([code(edit.file), ': ', edit.summary]);
      continue;
    }
    if (done.has(parsed.kind)) continue;
    done.add(parsed.kind);
    const places = applied.flatMap((other) => {
      const at = kindOf(other.summary);
      return at?.kind === parsed.kind ? [[code(`${other.file}:${at.line}`), ` (${at.component})`]] : [];
    });
    entries.push([`${count} components ${parsed.kind}: `, ...places.flatMap((place, i) => (i === 0 ? place : [', ', ...place]))]);
  }
  return entries;
}

function runbook(model: DesignModel): Section {
  const blocks: Block[] = [heading('Runbook entries', 'runbook')];
  for (const entry of model.runbook) {
    blocks.push(heading(entry.title));
    blocks.push(p(strong('Symptom: '), entry.symptom));
    blocks.push(list(entry.steps.map((s) => [s]), true));
  }
  return section(13, 'Operational Runbook', 'Stuck records, split-brain, table and partition maintenance, provider divergence and key flooding.', blocks);
}

/** What a Server Action's repeat gets: it has no HTTP response of its own to store. */
function serverActionOutcomes(actions: readonly ActionDesign[]): Block[] {
  const names = actions.filter((a) => a.transport === 'server-action').map((a) => a.name);
  if (names.length === 0) return [];
  return [
    p(
      `A Server Action (${andList(names)}) has no response of its own: what it returns is stored as JSON and returned to every repeat (a Date comes back as a string, as it would over the wire), and one that ends in redirect() is stored as that redirect, so a repeat sends the client to the same place without running. Anything else it throws releases the claim and a retry runs again. What the first call did beside its answer, a cookie set with cookies().set() for one, a repeat does not do again.`,
    ),
  ];
}
