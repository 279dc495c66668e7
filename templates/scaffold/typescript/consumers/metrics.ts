import { Counter, register as defaultRegistry, type Registry } from 'prom-client';
import type { ConsumerEvents } from './handler.js';

/**
 * Prometheus metrics for queue consumers: pass the result as `events` to idempotentHandler() or any adapter in this
 * folder. Redeliveries are deliveries of a message whose record already exists (finished: duplicate; claimed by a
 * live consumer: busy); dead-lettered are poison messages marked FAILED after maxAttempts.
 */
export function createConsumerMetrics(registry: Registry = defaultRegistry): ConsumerEvents {
  const registers = [registry];
  const messages = new Counter({
    name: 'idempotency_consumer_messages_total',
    help: 'Deliveries per action and outcome (done, duplicate, busy, dead, failed).',
    labelNames: ['action', 'outcome'],
    registers,
  });
  const redeliveries = new Counter({
    name: 'idempotency_consumer_redeliveries_total',
    help: 'Deliveries of a message already done or in progress: the broker redelivered or the producer published it twice.',
    labelNames: ['action'],
    registers,
  });
  const deadLettered = new Counter({
    name: 'idempotency_consumer_dead_lettered_total',
    help: 'Poison messages marked FAILED and sent to the dead letter after maxAttempts.',
    labelNames: ['action'],
    registers,
  });
  return {
    handled(action, outcome) {
      messages.inc({ action, outcome });
      if (outcome === 'duplicate' || outcome === 'busy') redeliveries.inc({ action });
      if (outcome === 'dead') deadLettered.inc({ action });
    },
  };
}
