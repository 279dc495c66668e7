import type { SourceFile } from 'ts-morph';
import type { WiringTarget } from '../types.js';
import { classifyConsumer, locateTrigger, wireConsumer } from './consumer.js';
import type { Transform } from './context.js';
import { classifyCron, wireCron } from './cron.js';

/** Transforms keyed by trigger rather than by web framework: they wrap a handler, wherever the app registers it. */
export const TRIGGER_TRANSFORMS: Partial<Record<WiringTarget['trigger'], Transform>> = { consumer: wireConsumer, cron: wireCron };

/** Scaffold modules the trigger wirings import from (present only when the design has such actions). */
export const TRIGGER_MODULES = ['consumers/bullmq', 'consumers/bull', 'consumers/kafka', 'consumers/amqplib', 'consumers/nats', 'consumers/handler', 'cron/guard', 'webhooks/webhooks', 'webhooks/verify'];

/** The target with the registration its line points at resolved on the untouched text (imports added later shift lines). */
export function triggerOccurrence(sf: SourceFile, target: WiringTarget, anyLine: boolean): WiringTarget {
  const found = locateTrigger(sf, target, anyLine, target.trigger === 'cron' ? classifyCron : classifyConsumer);
  return found.kind === 'found' && found.occurrence !== undefined ? { ...target, occurrence: found.occurrence } : target;
}
