import { BROKERS } from '../config/choices.js';
import type { ActionConfig } from '../config/schema.js';

/** A consumer inspection found, as its finding carries it (the inspector's full finding satisfies this). */
interface ConsumerFinding {
  kind: string;
  file: string;
  line: number;
  broker?: unknown;
}

/**
 * The broker each consumer action is delivered by, where inspection found the consumer at the action's source
 * (`file:line`): a worker often reads BullMQ, RabbitMQ and Kafka at once, and the stack names only one of them.
 * Only brokers the design knows; an action without one falls back to the stack's broker.
 */
export function actionBrokers(actions: readonly Pick<ActionConfig, 'name' | 'trigger' | 'source'>[], findings: readonly ConsumerFinding[]): Record<string, string> {
  const brokers: Record<string, string> = {};
  for (const action of actions) {
    if (action.trigger !== 'consumer' || !action.source) continue;
    const at = /^(.*):(\d+)$/.exec(action.source);
    if (!at) continue;
    const found = findings.find((f) => f.kind === 'consumer' && f.file === at[1] && f.line === Number(at[2]));
    const broker = found?.broker;
    if (typeof broker === 'string' && isKnownBroker(broker)) brokers[action.name] = broker;
  }
  return brokers;
}

export function isKnownBroker(value: unknown): boolean {
  return typeof value === 'string' && value !== 'none' && value !== 'unknown' && (BROKERS as readonly string[]).includes(value);
}
