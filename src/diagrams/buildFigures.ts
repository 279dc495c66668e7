import type { DesignModel } from '../model/types.js';
import { formatDuration } from '../config/duration.js';
import { buildRequestFlow, type RequestFlowInputs } from './buildRequestFlow.js';
import { buildSagaMachine, uncompensatedSteps, type SagaInputs } from './buildSagaMachine.js';
import type { Figure } from './figure.js';
import { toMermaid } from './toMermaid.js';

export type FigureInputs = RequestFlowInputs & {
  /** plain: the code is the idempotent(fn) wrapper, which throws instead of answering HTTP. */
  stack?: Pick<DesignModel['stack'], 'plain' | 'worker'>;
  diagrams: DesignModel['diagrams'];
  sagas: readonly SagaInputs[];
};

/**
 * Which diagrams pay off, and their Mermaid sources. Pure: same model, same figures.
 *
 * - The flowchart follows the model's decision (buildDesign weighs how many moving parts the
 *   design has; a single plain endpoint is better served by the response table).
 * - Every saga with at least one step gets its state machine: the spec treats an undrawn
 *   compensation path as an undesigned one, so there is no size threshold for these.
 */
export function buildFigures(model: FigureInputs): Figure[] {
  const figures: Figure[] = [];
  if (model.diagrams.flowchart) figures.push(requestFlowFigure(model));
  const used = new Set(figures.map((f) => f.id));
  for (const saga of model.sagas) {
    if (saga.steps.length === 0) continue;
    figures.push(sagaFigure(saga, uniqueId(`saga-${safeSlug(saga.slug)}`, used)));
  }
  return figures;
}

function requestFlowFigure(model: FigureInputs): Figure {
  const r = model.responses;
  if (model.stack?.worker) {
    const consumers = model.actions.some((a) => a.trigger === 'consumer');
    const crons = model.actions.some((a) => a.trigger === 'cron');
    return {
      id: 'request-flow',
      kind: 'flowchart',
      title: consumers ? 'Message handling' : 'Scheduled run handling',
      caption: [
        consumers
          ? "How a delivered message moves through the consumer handler: a message already handled is acknowledged as a duplicate without running, one another consumer holds is left unacknowledged ('busy') for the broker to deliver again, and an unreachable store throws StoreUnavailableError before anything runs, so the message is not acknowledged. A handler that throws releases the claim and the message comes back; on its last attempt the record is marked FAILED and the message is dead-lettered ('dead')."
          : '',
        crons ? `${consumers ? 'A cron job takes the same claim for its slot' : 'How a fired cron job claims its slot'}: 'ran' when it owned the slot and finished, 'duplicate' when the slot is already done, 'overlap' when another run holds it.` : '',
      ].filter(Boolean).join(' '),
      mermaid: toMermaid(buildRequestFlow(model)),
    };
  }
  if (model.stack?.plain) {
    const waits = r.inFlight === 'wait' ? `waits up to ${formatDuration(r.inFlightWaitMs)} for the first result, then ` : '';
    return {
      id: 'request-flow',
      kind: 'flowchart',
      title: 'Call handling',
      caption:
        `How a call moves through the plain idempotent(fn) wrapper: a reused key with a different input throws MismatchError, a duplicate in flight ${waits}throws InFlightError (retryAfterSeconds at most ${r.retryAfterSeconds}), ` +
        'and an unreachable store throws StoreUnavailableError. A thrown function releases the claim so a retry re-executes; a returned result is stored as JSON and returned to every repeat.',
      mermaid: toMermaid(buildRequestFlow(model)),
    };
  }
  const inFlight =
    r.inFlight === 'wait'
      ? `a duplicate in flight waits up to ${formatDuration(r.inFlightWaitMs)} for the first result, then gets ${r.inFlightStatus}`
      : `a duplicate in flight gets ${r.inFlightStatus} with Retry-After: ${r.retryAfterSeconds}`;
  return {
    id: 'request-flow',
    kind: 'flowchart',
    title: 'Request handling',
    caption:
      `How a protected request moves through the idempotency layer: a reused key with a different body gets ${r.mismatchStatus}, ${inFlight}, ` +
      `and an unreachable store fails closed with ${r.storeUnavailableStatus}. Errors release the claim so a retry re-executes; successes and definitive 4xx responses are stored and replayed.`,
    mermaid: toMermaid(buildRequestFlow(model)),
  };
}

function sagaFigure(saga: SagaInputs, id: string): Figure {
  const compensations = [...saga.steps.slice(0, -1)].reverse().flatMap((s) => (s.compensation === undefined ? [] : [s.compensation]));
  const undo =
    compensations.length === 0
      ? 'no step before the last has a compensation, so a permanent failure stops without undoing anything.'
      : `a permanent failure runs the compensations in reverse (${compensations.join(', then ')}).`;
  const kept = uncompensatedSteps(saga.steps).map((s) => s.name);
  const keptNote = kept.length === 0 || compensations.length === 0 ? '' : ` ${kept.join(', ')} ${kept.length === 1 ? 'has' : 'have'} no compensation, so ${kept.length === 1 ? 'its effect stays' : 'their effects stay'} after a rollback.`;
  return {
    id,
    kind: 'saga',
    action: saga.slug,
    title: `Saga state machine: ${saga.action}`,
    caption: `${saga.action} runs ${saga.steps.length} steps, each under its own sub-key; a retry after a transient failure resumes at the first incomplete step, and ${undo}${keptNote}`,
    mermaid: toMermaid(buildSagaMachine(saga)),
  };
}

/** The model's slug is already anchor-safe; this keeps the SVG ids valid even if it were not. */
function safeSlug(slug: string): string {
  const s = slug.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '');
  return s === '' ? 'action' : s;
}

function uniqueId(base: string, used: Set<string>): string {
  let id = base;
  for (let n = 2; used.has(id); n++) id = `${base}-${n}`;
  used.add(id);
  return id;
}
