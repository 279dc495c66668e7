import type { Inspection } from '../inspect/types.js';

/** The "here is what I read" lines the wizard prints before asking anything. */
export function summarizeInspection(inspection: Inspection): string[] {
  const { stack, findings } = inspection;
  const count = (kind: string) => findings.filter((f) => f.kind === kind).length;
  const endpoints = findings.filter((f) => f.kind === 'endpoint');
  if (findings.length === 0 && stack.language === 'unknown' && stack.frameworks.length === 0) {
    return ['Found no code to inspect here: the questions below start from scratch.'];
  }
  const facts = [
    stack.language === 'unknown' ? undefined : stack.language === 'typescript' ? 'TypeScript' : 'JavaScript',
    ...stack.frameworks,
    ...stack.databases,
    ...stack.brokers,
    ...stack.payments,
  ].filter(Boolean);
  const lines = ['Read the code first. What it says:', `  Stack: ${facts.length > 0 ? facts.join(', ') : 'not recognised'}`];
  const parts = [
    plural(endpoints.length, 'mutating endpoint') + aside([
      [endpoints.filter((e) => e.kind === 'endpoint' && e.touchesPayment).length, 'touching payments'],
      [endpoints.filter((e) => e.kind === 'endpoint' && e.sendsMessage?.length).length, 'sending e-mail, SMS or push'],
    ]),
    plural(count('payment'), 'payment call'),
    plural(count('webhook'), 'webhook handler'),
    plural(count('consumer'), 'message consumer'),
    plural(count('cron'), 'scheduled job'),
  ];
  lines.push(`  Found: ${parts.join(', ')}`);
  for (const f of findings) {
    if (f.kind === 'existing-idempotency') lines.push(`    already protected: ${f.file}:${f.line} ${f.detail}`);
    if (f.kind === 'payment' && !f.hasProviderKey) lines.push(`    no provider idempotency key: ${f.file}:${f.line} ${f.provider} ${f.operation}`);
    if (f.kind === 'payment' && f.hasProviderKey && f.keyPerAttempt) lines.push(`    provider idempotency key new on every call: ${f.file}:${f.line} ${f.provider} ${f.operation}`);
  }
  for (const warning of inspection.warnings.slice(0, 3)) lines.push(`    note: ${warning}`);
  return lines;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** ` (2 touching payments, 1 sending e-mail, SMS or push)`, leaving out the counts that are zero. */
function aside(counts: ReadonlyArray<[number, string]>): string {
  const parts = counts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}
