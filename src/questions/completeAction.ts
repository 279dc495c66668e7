import { PROVIDERS, type Trigger } from '../config/schema.js';
import type { PaymentFinding } from '../inspect/types.js';
import type { ActionCandidate } from './actionsFromInspection.js';
import type { ActionAnswer, AskContext } from './types.js';

/** When nothing better is known, the fingerprint covers the whole input of the trigger. */
export const FALLBACK_FIELDS: Record<Trigger, string[]> = {
  http: ['body'],
  webhook: ['id', 'type'],
  consumer: ['payload'],
  cron: ['scheduledFor'],
};

const FIELD_EXAMPLES = 'e.g. amount, currency, recipientId (for an order: customerId, items[].sku, items[].quantity)';

export function validateFieldList(text: string): true | string {
  const fields = splitFields(text);
  if (fields.length === 0) return `Name at least one field, ${FIELD_EXAMPLES}.`;
  const bad = fields.find((field) => /\s/.test(field));
  return bad ? `"${bad}" has a space; separate fields with commas.` : true;
}

export function splitFields(text: string): string[] {
  return [...new Set(text.split(',').map((f) => f.trim()).filter((f) => f !== ''))];
}

/** Interactive: asks only what the code did not answer about one chosen action. */
export async function askActionDetails(ctx: AskContext, action: ActionAnswer, candidate: ActionCandidate | undefined): Promise<ActionAnswer> {
  let result = action;
  if (result.significantFields.length === 0) {
    const offered = candidate?.fieldCandidates ?? [];
    const answer = await ctx.prompter.input({
      id: `fields:${action.name}`,
      message: `Which request fields define the intent of ${action.name}${action.route ? ` (${action.route})` : ''}?`,
      help: `A retry with the same key but different values here is rejected instead of replayed. ${offered.length > 0 ? `Found in the handler: ${offered.join(', ')}.` : FIELD_EXAMPLES}`,
      default: (offered.length > 0 ? offered : FALLBACK_FIELDS[action.trigger]).join(', '),
      validate: validateFieldList,
    });
    result = { ...result, significantFields: splitFields(answer) };
  }
  const calls = candidate?.externalCalls ?? [];
  if (!result.steps && calls.length >= 2) {
    const steps = stepsFromCalls(calls);
    const asSaga = await ctx.prompter.confirm({
      id: `saga:${action.name}`,
      message: `${action.name} makes ${calls.length} provider calls (${steps.map((s) => s.name).join(', ')}). Track them as saga steps?`,
      help: 'Each step gets its own sub-key, so a retry resumes at the first unfinished step instead of repeating the others.',
      default: true,
    });
    if (asSaga) {
      for (const step of steps) {
        const undo = await ctx.prompter.input({
          id: `compensation:${action.name}:${step.name}`,
          message: `How is ${step.name} undone if a later step fails? (step name; empty if it cannot be)`,
          help: 'e.g. refundPayment, releaseInventory, cancelShipment',
          default: '',
          validate: (text) => (/\s/.test(text.trim()) ? 'One step name without spaces, e.g. refundPayment.' : true),
        });
        if (undo.trim() !== '') step.compensation = undo.trim();
      }
      result = { ...result, steps };
    }
  }
  return result;
}

/** Non-interactive: the same gaps filled with the documented fallbacks, each recorded as an assumption. */
export function settleAction(action: ActionAnswer, candidate: ActionCandidate | undefined, assumptions: string[]): ActionAnswer {
  let result = action;
  if (result.significantFields.length === 0) {
    const offered = candidate?.fieldCandidates ?? [];
    const fields = offered.length > 0 ? offered : FALLBACK_FIELDS[action.trigger];
    assumptions.push(`${action.name}: the fingerprint fields were not given; it uses ${fields.join(', ')}. Narrow them to the fields that define the intent.`);
    result = { ...result, significantFields: fields };
  }
  const secrets = (candidate?.secretFields ?? []).filter((field) => !result.significantFields.includes(field));
  if (secrets.length > 0) {
    assumptions.push(`${action.name}: ${secrets.join(', ')} ${secrets.length === 1 ? 'is' : 'are'} left out of the fingerprint: a secret or a token made anew per submission is not the intent, and an unsalted hash of a secret in the store could be brute-forced by whoever reads the table. A retry under the same key with another ${secrets[0]} gets the first answer.`);
  }
  const calls = candidate?.externalCalls ?? [];
  if (!result.steps && calls.length >= 2) {
    const steps = stepsFromCalls(calls);
    assumptions.push(`${action.name}: its ${calls.length} provider calls are modelled as saga steps (${steps.map((s) => s.name).join(', ')}); no compensations were given.`);
    result = { ...result, steps };
  }
  return result;
}

/** "paymentIntents.create" → "createPaymentIntent": verb first, like the handler names around it. */
function stepsFromCalls(calls: PaymentFinding[]): Array<{ name: string; provider?: (typeof PROVIDERS)[number]; compensation?: string }> {
  const seen = new Set<string>();
  return calls.map((call) => {
    const parts = call.operation.split(/[^A-Za-z0-9]+/).filter(Boolean);
    const verb = parts.pop() ?? 'call';
    const noun = (parts.pop() ?? call.provider).replace(/s$/, '');
    let name = `${verb}${noun[0]?.toUpperCase()}${noun.slice(1)}`;
    for (let n = 2; seen.has(name); n++) name = `${name.replace(/\d+$/, '')}${n}`;
    seen.add(name);
    // The config names the providers the design derives keys for; other SDKs (Braintree, Square, …) stay unnamed.
    const provider = PROVIDERS.find((p) => p === call.provider);
    return provider ? { name, provider } : { name };
  });
}
