import type { SagaDesign, StepDesign } from '../model/types.js';

export type SagaStep = Pick<StepDesign, 'name' | 'compensation'>;
export interface SagaInputs extends Pick<SagaDesign, 'action' | 'slug'> {
  steps: readonly SagaStep[];
}
import type { State, StateGraph, Transition } from './graph.js';
import { TERMINAL } from './graph.js';

/**
 * One saga's state machine: the happy path through every step, a permanent-failure edge out of
 * every state that has a next step, and the compensations chained in reverse order. A step without
 * a compensation is skipped in the chain (its effect stays; the caption says so).
 *
 * States are named after what is done, transitions after what runs, like the spec's example; ids
 * are positional so user-chosen step names never reach Mermaid syntax except as escaped labels.
 */
export function buildSagaMachine(saga: Pick<SagaInputs, 'steps'>): StateGraph {
  const steps = saga.steps;
  const last = steps.length - 1;
  const states: State[] = [{ id: 'claimed', label: 'key claimed' }];
  const transitions: Transition[] = [{ from: TERMINAL, to: 'claimed' }];
  const doneId = (i: number) => (i === last ? 'completed' : `done${i + 1}`);
  const undoId = (i: number) => `undo${i + 1}`;

  steps.forEach((step, i) => {
    if (i < last) states.push({ id: doneId(i), label: `${step.name} done` });
    transitions.push({ from: i === 0 ? 'claimed' : doneId(i - 1), to: doneId(i), label: step.name });
  });
  states.push({ id: 'completed', label: 'COMPLETED' });

  // Reverse order: undoing step i is followed by undoing the nearest earlier compensable step.
  const compensable = steps.map((s, i) => ({ s, i })).filter(({ s, i }) => s.compensation !== undefined && i < last);
  for (const { s, i } of [...compensable].reverse()) states.push({ id: undoId(i), label: `${s.compensation} (undo ${s.name})` });
  states.push({ id: 'rolledBack', label: 'ROLLED_BACK' });

  const undoFrom = (i: number) => {
    const target = [...compensable].reverse().find((c) => c.i <= i);
    return target === undefined ? 'rolledBack' : undoId(target.i);
  };
  steps.forEach((step, i) => {
    const from = i === 0 ? 'claimed' : doneId(i - 1);
    // "fails" means permanently: a transient failure keeps the state and the retry resumes here.
    transitions.push({ from, to: undoFrom(i - 1), label: `${step.name} fails` });
  });
  [...compensable].reverse().forEach(({ i }) => transitions.push({ from: undoId(i), to: undoFrom(i - 1), label: 'compensated' }));

  transitions.push({ from: 'completed', to: TERMINAL }, { from: 'rolledBack', to: TERMINAL });
  return { kind: 'state', states, transitions };
}

/** Steps whose effect a later permanent failure cannot undo: they have no compensation but are not last. */
export function uncompensatedSteps(steps: readonly SagaStep[]): SagaStep[] {
  return steps.filter((s, i) => s.compensation === undefined && i < steps.length - 1);
}
