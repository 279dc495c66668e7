import type { Logger } from '../logger.js';
import { printable } from './files/printable.js';
import type { EndpointFinding, Finding, Inspection, PerAttemptClaim, StackFacts } from './types.js';
import { libraryPhrase } from './messageLabels.js';

type Paint = Pick<Logger, 'value' | 'dim'>;

const SECTIONS: Array<{ kind: Finding['kind']; title: string }> = [
  { kind: 'payment', title: 'Payment calls' },
  { kind: 'endpoint', title: 'Mutating endpoints' },
  { kind: 'webhook', title: 'Webhook handlers' },
  { kind: 'consumer', title: 'Message consumers' },
  { kind: 'cron', title: 'Scheduled jobs' },
  { kind: 'existing-idempotency', title: 'Already protected' },
];

/** The human report: stack first, then findings grouped by kind, money-moving ones first within each group. */
export function formatInspection(inspection: Inspection, paint: Paint): string {
  const lines: string[] = [`Inspected ${paint.value(printable(inspection.root))}`, '', ...formatStack(inspection.stack, paint)];
  for (const { kind, title } of SECTIONS) {
    const group = inspection.findings.filter((f) => f.kind === kind);
    if (!group.length) continue;
    const ordered = [...group].sort((a, b) => Number(touchesMoney(b)) - Number(touchesMoney(a)));
    // File names, routes and identifiers come from the repository: escaped before they reach the terminal.
    const rows = ordered.map((f) => [printable(`${f.file}:${f.line}`), printable(f.id), printable(flagsOf(f).join(', '))]);
    const widths = [0, 1].map((i) => Math.min(60, Math.max(...rows.map((r) => (r[i] as string).length))));
    lines.push('', `${title} (${group.length})`);
    for (const [where, id, flags] of rows) {
      lines.push(`  ${(where as string).padEnd(widths[0] as number)}  ${(id as string).padEnd(widths[1] as number)}  ${flags ? paint.dim(flags as string) : ''}`.trimEnd());
    }
  }
  if (!inspection.findings.length) lines.push('', 'No mutating endpoints, payment calls, webhooks, consumers or scheduled jobs found.');
  if (inspection.warnings.length) {
    lines.push('', `Warnings (${inspection.warnings.length})`);
    for (const w of inspection.warnings) lines.push(`  ${printable(w)}`);
  }
  return `${lines.join('\n')}\n`;
}

function formatStack(stack: StackFacts, paint: Paint): string[] {
  const list = (values: string[]) => (values.length ? values.map((v) => paint.value(v)).join(', ') : paint.dim('none found'));
  const out = [
    `Language      ${paint.value(stack.language)}`,
    `Frameworks    ${list(stack.frameworks)}`,
    `Databases     ${list(stack.databases)}${stack.orms.length ? paint.dim(` via ${stack.orms.join(', ')}`) : ''}`,
    `Brokers       ${list(stack.brokers)}`,
    `Payments      ${list(stack.payments)}`,
    `Tests         ${paint.value(stack.testFramework)}    Package manager ${paint.value(stack.packageManager)}`,
  ];
  for (const pkg of stack.packages ?? []) {
    const facts = [...pkg.stack.frameworks, ...pkg.stack.brokers, ...pkg.stack.payments];
    out.push(`  ${printable(pkg.name)} ${paint.dim(`(${printable(pkg.dir)})`)}${facts.length ? `: ${facts.join(', ')}` : ''}`);
  }
  return out;
}

function touchesMoney(f: Finding): boolean {
  return f.kind === 'payment' || (f.kind === 'endpoint' && f.touchesPayment === true) || (f.kind === 'webhook' && f.provider !== undefined && /stripe|adyen|paypal/.test(f.provider));
}

/** ` (the ON CONFLICT at x.ts:12 is keyed on randomUUID(), made fresh per delivery)` when a claim was refused for that. */
function freshNote(claim: PerAttemptClaim | undefined): string {
  return claim ? ` (the ${claim.claim} at ${claim.file}:${claim.line} is keyed on ${claim.value}, made fresh per delivery)` : '';
}

const TRANSPORTS: Record<NonNullable<EndpointFinding['transport']>, string> = { 'server-action': 'Server Action', trpc: 'tRPC procedure', graphql: 'GraphQL mutation' };

function flagsOf(f: Finding): string[] {
  switch (f.kind) {
    case 'payment':
      return [f.hasProviderKey ? (f.keyPerAttempt ? 'provider key new on every call' : 'provider key passed') : 'no provider key', ...(f.risk ? [f.risk] : []), ...(f.via === 'http' ? ['raw HTTP'] : []), ...(f.enclosingFunction ? [`in ${f.enclosingFunction}`] : [])];
    case 'endpoint':
      return [
        ...(f.touchesPayment ? ['touches payment'] : []),
        ...(f.sendsMessage?.length ? [`${f.sendsMessage.map(libraryPhrase).join(' and ')}`] : []),
        ...(f.streamsResponse ? ['streams its answer'] : []),
        // A Server Action, tRPC procedure or GraphQL mutation has no URL of its own: what it is, not "prefix unknown".
        ...(f.transport ? [TRANSPORTS[f.transport]] : f.prefixResolved ? [] : ['mount prefix unknown']),
        ...(f.handler ? [`handler ${f.handler}`] : []),
        ...(f.bodyFields?.length ? [`body: ${f.bodyFields.join(' ')}`] : []),
      ];
    case 'webhook':
      return [f.verifiesSignature ? 'signature verified' : 'signature NOT verified', f.dedupeEvidence ? `dedupes event id at ${f.dedupeEvidence.file}:${f.dedupeEvidence.line}` : f.dedupesEventId ? 'dedupes event id' : `no event-id dedupe${freshNote(f.perAttemptClaim)}`];
    case 'consumer':
      return [
        ...(f.job ? [`job ${f.job}`] : []),
        ...(f.via ? [`through ${f.via.name} (${f.via.file}:${f.via.line})`] : []),
        f.dedupeEvidence ? `dedupes at ${f.dedupeEvidence.file}:${f.dedupeEvidence.line}` : f.dedupes ? 'dedupes' : `no dedupe${freshNote(f.perAttemptClaim)}`,
        ...(f.messageId ? [`message id ${f.messageId}`] : []),
      ];
    case 'cron':
      return [...(f.schedule ? [f.schedule] : [])];
    case 'existing-idempotency':
      return [];
  }
}
