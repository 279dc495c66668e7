import { dedupesEventId } from '../detectors/dedupeEvidence.js';
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
    const texts = [...reach.map((f) => graph.text(f)), ...hits.map((h) => spanText(records, h))].join('\n');
    const provider = hits.find((h) => h.provider)?.provider ?? PROVIDER_IN_PATH.exec(ep.path)?.[0].toLowerCase();
    findings.push({
      kind: 'webhook',
      id: `${provider ?? 'unknown'} webhook ${ep.id}`,
      file: ep.file,
      line: ep.line,
      ...(provider ? { provider } : {}),
      verifiesSignature: hits.length > 0,
      dedupesEventId: dedupesEventId(texts),
      route: ep.id,
    });
  }
  for (const w of raw) {
    if (linked.has(w)) continue;
    const fromKeys = graph.reachable(w.file, w.enclosingKeys.slice(-1), 2).map((f) => graph.text(f)).join('\n');
    findings.push({
      kind: 'webhook',
      id: `${w.provider ?? 'unknown'} webhook ${w.file}`,
      file: w.file,
      line: w.line,
      ...(w.provider ? { provider: w.provider } : {}),
      verifiesSignature: w.verifiesSignature,
      dedupesEventId: dedupesEventId(`${spanText(records, w)}\n${fromKeys}`),
    });
  }
  return findings;
}

function spanText(records: ProjectRecords, w: RawWebhook): string {
  return records.files.get(w.file)?.text.slice(w.span[0], w.span[1]) ?? '';
}
