import type { CodeFinding } from '../findings/types.js';
import { TRANSPORTS, TRIGGERS } from '../config/choices.js';
import type { ActionCodeFacts } from '../model/codeFacts.js';
import type { ReviewedCandidate } from '../model/types.js';
import { creditedFindings } from '../model/creditedFindings.js';
import { isKnownBroker } from '../model/actionBrokers.js';
import type { ActionForms, FormLocation } from '../model/actionForms.js';
import type { InspectionInput } from '../model/index.js';
import type { FormattedFile } from './format.js';
import { readInside } from './safePath.js';

/**
 * The part of init's inspection the document depends on (protection the code already has, and what the findings
 * rules reported), kept as a managed file so `generate` (which never runs the slow inspector) renders exactly what
 * `init` rendered. `init` refreshes it; `audit` in CI tells when the code has moved on.
 */
export const SNAPSHOT_PATH = '.idempotency-builder/existing-protection.json';

type Finding = InspectionInput['findings'][number] & { hasProviderKey?: boolean };

export interface ProjectSnapshot {
  inspection: InspectionInput;
  /** Absent when the code was never audited (a design made from the config alone). */
  codeFindings?: readonly CodeFinding[];
  /** What each configured action's code does, read by the findings engine; absent when the code was not read. */
  actionFacts?: readonly ActionCodeFacts[];
  /** What inspection found that init left unprotected, with why; absent when the code was not read. */
  reviewed?: readonly ReviewedCandidate[];
  /** The broker inspection found delivering each consumer action, by action name; absent when none was found. */
  brokers?: Readonly<Record<string, string>>;
  /** The server-rendered forms inspection found posting to each HTTP action, by action name; absent when none. */
  forms?: ActionForms;
}

/** What init learnt from the code, in the stable form the snapshot file keeps. */
export function snapshotOf({ inspection, codeFindings, actionFacts, reviewed, brokers, forms }: ProjectSnapshot): ProjectSnapshot {
  const formEntries = Object.entries(forms ?? {})
    .map(([action, list]): [string, FormLocation[]] => [action, list.filter(isLocation).map((f) => ({ file: f.file, line: f.line })).sort(byFileLine)])
    .filter(([, list]) => list.length > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const knownBrokers = Object.entries(brokers ?? {})
    .filter(([, broker]) => isKnownBroker(broker))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    inspection: creditedProtection(inspection),
    ...(codeFindings ? { codeFindings: [...codeFindings].filter(isCodeFinding).sort(byLocation) } : {}),
    ...(actionFacts?.length ? { actionFacts: [...actionFacts].filter(isActionFacts).sort((a, b) => (a.action < b.action ? -1 : a.action > b.action ? 1 : 0)) } : {}),
    // Inspection order (payments, webhooks, consumers, jobs, endpoints), which is already stable.
    ...(reviewed?.length ? { reviewed: reviewed.filter(isReviewed).map(reviewedFields) } : {}),
    ...(knownBrokers.length > 0 ? { brokers: Object.fromEntries(knownBrokers) } : {}),
    ...(formEntries.length > 0 ? { forms: Object.fromEntries(formEntries) } : {}),
  };
}

/** Only the known fields, in one order, so the file is byte-identical for the same candidates. */
const reviewedFields = (r: ReviewedCandidate): ReviewedCandidate => ({
  name: r.name,
  trigger: r.trigger,
  ...(r.route !== undefined ? { route: r.route } : {}),
  ...(r.transport !== undefined ? { transport: r.transport } : {}),
  source: r.source,
  reason: r.reason,
});

const byLocation = (a: CodeFinding, b: CodeFinding) =>
  a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column || (a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0);

/** Only the fields buildDesign reads, sorted, so the file is byte-identical for the same findings. */
function creditedProtection(inspection: InspectionInput): InspectionInput {
  const findings = (creditedFindings(inspection.findings) as readonly Finding[])
    .map((f) => ({
      kind: f.kind,
      id: f.id,
      file: f.file,
      line: f.line,
      ...(f.mechanism !== undefined ? { mechanism: f.mechanism } : {}),
      ...(f.detail !== undefined ? { detail: f.detail } : {}),
      ...(f.kind === 'payment' ? { hasProviderKey: true } : {}),
    }))
    .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  return { findings };
}

/** The managed file for a snapshot; none when the code had nothing to credit and was not audited. */
export function snapshotFile(snapshot: ProjectSnapshot): FormattedFile[] {
  if (snapshot.inspection.findings.length === 0 && snapshot.codeFindings === undefined && snapshot.reviewed === undefined) return [];
  const body = {
    $comment: 'Written by idempotency-builder init: protection found in the code and findings on it, as the design shows them. Re-run init to refresh.',
    findings: snapshot.inspection.findings,
    ...(snapshot.codeFindings ? { codeFindings: snapshot.codeFindings } : {}),
    ...(snapshot.actionFacts ? { actionFacts: snapshot.actionFacts } : {}),
    ...(snapshot.reviewed ? { reviewed: snapshot.reviewed } : {}),
    ...(snapshot.brokers ? { brokers: snapshot.brokers } : {}),
    ...(snapshot.forms ? { forms: snapshot.forms } : {}),
  };
  return [{ path: SNAPSHOT_PATH, class: 'managed', contents: `${JSON.stringify(body, null, 2)}\n`, formatted: true }];
}

const isFinding = (value: unknown): value is Finding => {
  const f = value as Partial<Finding> | null;
  return typeof f === 'object' && f !== null && typeof f.kind === 'string' && typeof f.id === 'string' && typeof f.file === 'string' && typeof f.line === 'number' &&
    (f.mechanism === undefined || typeof f.mechanism === 'string') && (f.detail === undefined || typeof f.detail === 'string');
};

const isCodeFinding = (value: unknown): value is CodeFinding => {
  const f = value as Partial<CodeFinding> | null;
  return typeof f === 'object' && f !== null && ['ruleId', 'title', 'severity', 'file', 'message', 'evidence', 'fix', 'docsAnchor', 'fingerprint'].every((k) => typeof (f as Record<string, unknown>)[k] === 'string') &&
    typeof f.line === 'number' && typeof f.column === 'number' && ['error', 'warning', 'note'].includes(f.severity as string);
};

const isActionFacts = (value: unknown): value is ActionCodeFacts => {
  const f = value as Partial<ActionCodeFacts> | null;
  const located = (x: unknown) => typeof x === 'object' && x !== null && typeof (x as { file?: unknown }).file === 'string' && typeof (x as { line?: unknown }).line === 'number';
  return typeof f === 'object' && f !== null && typeof f.action === 'string' && located(f.handler) &&
    Array.isArray(f.calls) && f.calls.every((c) => located(c) && typeof c.provider === 'string' && typeof c.operation === 'string' && typeof c.risk === 'string' && typeof c.keyed === 'boolean') &&
    Array.isArray(f.writes) && f.writes.every((w) => located(w) && typeof w.target === 'string' && typeof w.kind === 'string') &&
    (f.messages === undefined || (Array.isArray(f.messages) && f.messages.every((m) => located(m) && ['email', 'sms', 'push'].includes(m.channel) && typeof m.library === 'string' && typeof m.operation === 'string' && typeof m.keyed === 'boolean' && (m.keyPerAttempt === undefined || typeof m.keyPerAttempt === 'boolean')))) &&
    (f.claimTransaction === undefined || f.claimTransaction === true) &&
    (f.spans === undefined || (Array.isArray(f.spans) && f.spans.every((x) => typeof x?.file === 'string' && typeof x.from === 'number' && typeof x.to === 'number'))) &&
    Array.isArray(f.budgets) && f.budgets.every((b) => typeof b.provider === 'string' && (b.timeoutMs === null || typeof b.timeoutMs === 'number') && typeof b.attempts === 'number' && typeof b.evidence === 'string');
};

const isReviewed = (value: unknown): value is ReviewedCandidate => {
  const r = value as Partial<ReviewedCandidate> | null;
  return typeof r === 'object' && r !== null && typeof r.name === 'string' && typeof r.source === 'string' && typeof r.reason === 'string' &&
    (TRIGGERS as readonly unknown[]).includes(r.trigger) && (r.route === undefined || typeof r.route === 'string') &&
    (r.transport === undefined || (TRANSPORTS as readonly unknown[]).includes(r.transport));
};

const isLocation = (value: unknown): value is FormLocation =>
  typeof value === 'object' && value !== null && typeof (value as FormLocation).file === 'string' && typeof (value as FormLocation).line === 'number';

const byFileLine = (a: FormLocation, b: FormLocation) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line);

const EMPTY: ProjectSnapshot = { inspection: { findings: [] } };

/** The snapshot on disk (never through a link); an unreadable or hand-broken one counts as empty. */
export async function readSnapshot(root: string): Promise<ProjectSnapshot> {
  const text = await readInside(root, SNAPSHOT_PATH);
  if (text === undefined) return EMPTY;
  try {
    const raw = JSON.parse(text) as { findings?: unknown; codeFindings?: unknown; actionFacts?: unknown; reviewed?: unknown; brokers?: unknown; forms?: unknown };
    const protection = { findings: Array.isArray(raw.findings) ? raw.findings.filter(isFinding) : [] };
    return snapshotOf({
      inspection: protection,
      codeFindings: Array.isArray(raw.codeFindings) ? (raw.codeFindings as unknown[]).filter(isCodeFinding) : undefined,
      actionFacts: Array.isArray(raw.actionFacts) ? (raw.actionFacts as unknown[]).filter(isActionFacts) : undefined,
      reviewed: Array.isArray(raw.reviewed) ? (raw.reviewed as unknown[]).filter(isReviewed) : undefined,
      brokers: typeof raw.brokers === 'object' && raw.brokers !== null && !Array.isArray(raw.brokers) ? (raw.brokers as Record<string, string>) : undefined,
      forms:
        typeof raw.forms === 'object' && raw.forms !== null && !Array.isArray(raw.forms)
          ? Object.fromEntries(Object.entries(raw.forms as Record<string, unknown>).filter((entry): entry is [string, FormLocation[]] => Array.isArray(entry[1])))
          : undefined,
    });
  } catch {
    return EMPTY;
  }
}
