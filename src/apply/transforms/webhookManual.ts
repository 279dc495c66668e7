import type { WiringTarget } from '../types.js';
import { manualOnly, type TransformOutcome } from './context.js';

/**
 * What a route transform answers for a webhook it cannot wrap: a webhook is deduplicated by the provider's event id
 * inside its handler, never by the request middleware (the scaffold has none for it, and a scoped key would refuse
 * every delivery). Each route transform returns this itself, after its own stale check, and edits nothing.
 */
export const webhookManual = (target: WiringTarget, line = target.line): TransformOutcome =>
  manualOnly(target, `wrap the event handling after the signature check with the scaffold's webhook processor (webhooks/, wiring in TRIGGERS.md), keyed by the provider's event id`, line);
