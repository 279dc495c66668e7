import { Counter, register as defaultRegistry, type Registry } from 'prom-client';
import type { WebhookEvents } from './webhooks.js';

/**
 * Prometheus metrics for webhook endpoints: pass the result as `events` to createWebhookProcessor(). One counter,
 * by outcome: received, applied, duplicate (a resend of a finished event), ignored (a type not handled on purpose),
 * stale (older than the newest applied), failed (the handler threw: the provider resends), rejected_signature.
 */
export function createWebhookMetrics(registry: Registry = defaultRegistry): WebhookEvents {
  const deliveries = new Counter({
    name: 'idempotency_webhook_events_total',
    help: 'Webhook events per action, provider and outcome (received, applied, duplicate, ignored, stale, failed, rejected_signature).',
    labelNames: ['action', 'provider', 'outcome'],
    registers: [registry],
  });
  const count = (outcome: string) => (action: string, provider: string) =>
    deliveries.inc({ action, provider, outcome });
  return {
    received: count('received'),
    rejectedSignature: count('rejected_signature'),
    duplicate: count('duplicate'),
    ignored: (action, provider) => deliveries.inc({ action, provider, outcome: 'ignored' }),
    stale: count('stale'),
    applied: count('applied'),
    failed: count('failed'),
  };
}
