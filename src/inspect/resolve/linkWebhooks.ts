import { eventIdDedupe, type SourcePiece } from '../detectors/dedupeEvidence.js';
import type { RawWebhook } from '../detectors/detectorTypes.js';
import type { WebhookFinding } from '../types.js';
import type { BuiltEndpoint } from './buildEndpoints.js';
import type { FunctionGraph } from './functionGraph.js';
import type { ProjectRecords } from './projectRecords.js';

const PROVIDER_IN_PATH = /stripe|adyen|paypal|github|shopify|slack|twilio|svix|clerk|sendgrid|mailgun|postmark|resend|square|braintree|mollie|paddle|lemonsqueezy|razorpay/i;

/**
 * A webhook is reported where it is received: at the route whose handler reaches the signature check, or at the
 * check itself when no route reaches it (Lambda handlers, framework-less servers). Routes named like webhooks
 * with no check at all are reported too: unverified webhooks are the riskiest kind.
 */
export function linkWebhooks(records: ProjectRecords, graph: FunctionGraph, endpoints: readonly BuiltEndpoint[]): WebhookFinding[] {
  const raw: RawWebhook[] = [...records.files.values()].flatMap((r) => r.facts.webhooks);
  const findings: WebhookFinding[] = [];
  const linked = new Set<RawWebhook>();
  for (const { finding: ep, route } of endpoints) {
    const reach = graph.reachable(route.file, route.handlerKeys);
    const reachIds = new Set(reach.map((f) => `${f.file}::${f.key}`));
    const hits = raw.filter((w) => w.enclosingKeys.some((k) => reachIds.has(`${w.file}::${k}`)));
    const looksLikeWebhook = /webhook|\/hooks?(\/|$)|\/ipn(\/|$)/i.test(ep.path);
    if (!hits.length && !looksLikeWebhook) continue;
    hits.forEach((h) => linked.add(h));
    const evidence = eventIdDedupe([...reach.map((f) => piece(records, f.file, f.start, f.end)), ...hits.map((h) => piece(records, h.file, h.span[0], h.span[1]))]);
    const provider = hits.find((h) => h.provider)?.provider ?? PROVIDER_IN_PATH.exec(ep.path)?.[0].toLowerCase();
    findings.push({
      kind: 'webhook',
      id: `${provider ?? 'unknown'} webhook ${ep.id}`,
      file: ep.file,
      line: ep.line,
      ...(provider ? { provider } : {}),
      verifiesSignature: hits.length > 0,
      dedupesEventId: evidence !== undefined,
      route: ep.id,
      ...(evidence ? { dedupeEvidence: evidence } : {}),
    });
  }
  for (const w of raw) {
    if (linked.has(w)) continue;
    const evidence = eventIdDedupe([piece(records, w.file, w.span[0], w.span[1]), ...graph.reachable(w.file, w.enclosingKeys.slice(-1), 2).map((f) => piece(records, f.file, f.start, f.end))]);
    findings.push({
      kind: 'webhook',
      id: `${w.provider ?? 'unknown'} webhook ${w.file}`,
      file: w.file,
      line: w.line,
      ...(w.provider ? { provider: w.provider } : {}),
      verifiesSignature: w.verifiesSignature,
      dedupesEventId: evidence !== undefined,
      ...(evidence ? { dedupeEvidence: evidence } : {}),
    });
  }
  return findings;
}

function piece(records: ProjectRecords, file: string, start: number, end: number): SourcePiece {
  const text = records.files.get(file)?.text ?? '';
  return { file, text: text.slice(start, end), line: lineAt(text, start) };
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
