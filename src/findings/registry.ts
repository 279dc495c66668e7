import { actionNotWrapped } from './rules/action-not-wrapped.js';
import { blindEventUpsert } from './rules/blind-event-upsert.js';
import { clientControlledAmount } from './rules/client-controlled-amount.js';
import { consumerWithoutDedupe } from './rules/consumer-without-dedupe.js';
import { cronWithoutOverlapGuard } from './rules/cron-without-overlap-guard.js';
import { leaseShorterThanWorstCase } from './rules/lease-shorter-than-worst-case.js';
import { mutatingGet } from './rules/mutating-get.js';
import { perAttemptProviderKey } from './rules/per-attempt-provider-key.js';
import { providerCallWithoutKey } from './rules/provider-call-without-key.js';
import { providerParamsChangeBetweenRetries } from './rules/provider-params-change-between-retries.js';
import { readThenCreate } from './rules/read-then-create.js';
import { sleepRetryInRequestPath } from './rules/sleep-retry-in-request-path.js';
import { webhookAcknowledgedBeforeProcessing } from './rules/webhook-acknowledged-before-processing.js';
import { webhookDedupeBeforeVerification } from './rules/webhook-dedupe-before-verification.js';
import { webhookRejectsUnhandledEvents } from './rules/webhook-rejects-unhandled-events.js';
import { webhookWithoutEventDedupe } from './rules/webhook-without-event-dedupe.js';
import type { Rule } from './types.js';

/** Every rule, in the order the document presents them. Adding a rule = one file + one line here. */
export const rules: readonly Rule[] = [
  providerCallWithoutKey,
  perAttemptProviderKey,
  providerParamsChangeBetweenRetries,
  clientControlledAmount,
  webhookWithoutEventDedupe,
  webhookDedupeBeforeVerification,
  webhookAcknowledgedBeforeProcessing,
  webhookRejectsUnhandledEvents,
  blindEventUpsert,
  readThenCreate,
  sleepRetryInRequestPath,
  mutatingGet,
  consumerWithoutDedupe,
  cronWithoutOverlapGuard,
  actionNotWrapped,
  leaseShorterThanWorstCase,
];

export function ruleById(id: string): Rule | undefined {
  return rules.find((r) => r.id === id);
}
