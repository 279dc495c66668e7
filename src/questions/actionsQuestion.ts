import { actionSchema } from '../config/schema.js';
import { actionsFromInspection, type ActionCandidate } from './actionsFromInspection.js';
import { askActionDetails, settleAction } from './completeAction.js';
import { parseActionsFlag } from './parseActionsFlag.js';
import { parseActionText } from './parseActionText.js';
import { MAX_PICKED, pickCreates } from './pickCreates.js';
import type { ActionAnswer, AskContext, Question } from './types.js';

/** The placeholder of the partial-context protocol: named so nobody mistakes it for a real endpoint. */
export const GENERIC_ACTION: ActionAnswer = {
  name: 'genericProtectedAction',
  trigger: 'http',
  route: 'POST /protected-actions',
  significantFields: ['payload'],
  description: 'Placeholder: no action to protect was found in the code or named during init.',
};

const GENERIC_ASSUMPTION =
  'No action to protect was found in the code or named during init: the design protects a placeholder, genericProtectedAction (POST /protected-actions, fingerprint over the whole payload). Replace it in idempotency.config.json with your real actions and run `idempotency-builder generate`.';

const EXAMPLES = [
  'createPayment POST /payments',
  'submitOrder POST /orders',
  'process stripe webhook',
  'sendNotification consumer',
  'nightly invoice job',
] as const;

export const actionsQuestion: Question<'actions'> = {
  key: 'actions',
  number: 1,
  title: 'Actions to protect',
  help: 'The operations that must run exactly once however often they are retried: payments, orders, webhooks, consumers, jobs.',
  examples: EXAMPLES,
  flags: ['--actions'],
  flagExample: `--actions '[{"name":"createPayment","trigger":"http","route":"POST /payments","significantFields":["amount","currency"]}]' (or a JSON file path)`,
  inspectable: true,
  needsConsent: true,
  fromFlags: (flags, ctx) => (flags.actions === undefined ? undefined : parseActionsFlag(flags.actions, ctx.cwd)),
  fromConfig: (config) => {
    const list = Array.isArray(config['actions']) ? (config['actions'] as unknown[]) : [];
    const valid = list.filter((item) => actionSchema.safeParse(item).success) as ActionAnswer[];
    return valid.length > 0 ? valid : undefined;
  },
  infer: (ctx) => {
    const candidates = actionsFromInspection(ctx.inspection);
    const found = candidates.filter((c) => c.checked).map((c) => c.action);
    // A plain CRUD app has nothing obviously harmful to repeat: its create endpoints, not a placeholder.
    const chosen = found.length > 0 ? found : pickCreates(candidates);
    return chosen.length > 0 ? chosen : undefined;
  },
  whenNeeded: (inspection, given) => !given.actions && actionsFromInspection(inspection).length === 0,
  settle: (ctx, value, assumptions) => {
    const candidates = actionsFromInspection(ctx.inspection);
    if (!candidates.some((c) => c.checked)) assumptions.push(picksAssumption(value));
    return value.map((action) => settleAction(action, candidateFor(candidates, action), assumptions));
  },
  fallback: () => ({ value: [GENERIC_ACTION], assumption: GENERIC_ASSUMPTION }),
  ask: askActions,
};

function picksAssumption(actions: readonly ActionAnswer[]): string {
  return `No endpoint with a payment, a webhook or a harmful duplicate was found: the design protects the create endpoints init picked (${actions.map((a) => a.name).join(', ')}; at most ${MAX_PICKED} routes, those that insert a record first). Edit actions in idempotency.config.json to change the list.`;
}

async function askActions(ctx: AskContext, prefill: ActionAnswer[] | undefined): Promise<ActionAnswer[]> {
  const candidates = actionsFromInspection(ctx.inspection);
  let chosen: ActionAnswer[] = [];
  const offered = mergeOffer(prefill ?? [], candidates);
  if (offered.length > 0) {
    chosen = await ctx.prompter.checkbox({
      id: 'actions',
      message: 'Which actions should be protected? (space toggles, enter confirms)',
      help: `Q1 · ${actionsQuestion.help} Payment-touching ones are listed first.`,
      choices: offered,
    });
  }
  if (chosen.length === 0) chosen = await askActionsInWords(ctx, offered.length > 0);
  const details: ActionAnswer[] = [];
  for (const action of chosen) details.push(await askActionDetails(ctx, action, candidateFor(candidates, action)));
  return details;
}

/** Partial-context protocol: ask in words, once more with concrete examples, then fall back to the placeholder. */
async function askActionsInWords(ctx: AskContext, sawList: boolean): Promise<ActionAnswer[]> {
  const prompts = [
    {
      message: sawList ? 'None selected. What action are you protecting instead?' : 'What action are you protecting? (comma-separated)',
      help: `Q1 · Nothing to protect was found in the code. Name the actions, e.g. ${EXAMPLES.slice(0, 3).join('; ')}.`,
    },
    {
      message: 'Still need at least one action (leave empty to continue with a placeholder):',
      help: `Examples: "${EXAMPLES.join('", "')}". Anything that charges money, creates a record or sends a message counts.`,
    },
  ];
  for (const [index, prompt] of prompts.entries()) {
    const text = await ctx.prompter.input({ id: index === 0 ? 'actions:describe' : 'actions:describe-again', ...prompt, default: '' });
    const parsed = parseActionText(text);
    if (parsed.length > 0) return dedupeNames(parsed);
  }
  ctx.assumptions.push(GENERIC_ASSUMPTION);
  return [GENERIC_ACTION];
}

/** Configured actions stay checked; newly detected ones are offered too (checked when nothing was configured). */
function mergeOffer(configured: ActionAnswer[], candidates: ActionCandidate[]) {
  const fromConfig = configured.map((action) => {
    const candidate = candidates.find((c) => sameAction(c.action, action));
    return { value: action, name: label(action, candidate?.note), short: action.name, checked: true, group: candidate?.group ?? 'From your config' };
  });
  const fresh = candidates
    .filter((c) => !configured.some((action) => sameAction(c.action, action)))
    .map((c) => ({ value: c.action, name: label(c.action, c.note), short: c.action.name, checked: configured.length === 0 && c.checked, group: c.group }));
  return [...fromConfig, ...fresh];
}

function label(action: ActionAnswer, note?: string): string {
  const where = action.route ? ` ${action.route}` : ` (${action.trigger})`;
  const fields = action.significantFields.length > 0 ? ` [${action.significantFields.join(', ')}]` : '';
  const source = action.source ? `  ${action.source}` : '';
  return `${action.name}${where}${fields}${action.provider ? ` · ${action.provider}` : ''}${source}${note ? `  (${note})` : ''}`;
}

function sameAction(a: ActionAnswer, b: ActionAnswer): boolean {
  return a.name === b.name || (a.route !== undefined && a.route === b.route && a.trigger === b.trigger);
}

function candidateFor(candidates: ActionCandidate[], action: ActionAnswer): ActionCandidate | undefined {
  return candidates.find((c) => sameAction(c.action, action));
}

function dedupeNames(actions: ActionAnswer[]): ActionAnswer[] {
  const seen = new Map<string, number>();
  return actions.map((action) => {
    const count = (seen.get(action.name) ?? 0) + 1;
    seen.set(action.name, count);
    return count > 1 ? { ...action, name: `${action.name}${count}` } : action;
  });
}
