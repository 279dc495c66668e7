import type { StaticFile } from '../typescriptRuntime.js';

/** The store-neutral saga tracker: steps are kept by the store through its StepStore methods. */
export const SAGA_FILE: StaticFile = { path: 'saga.ts', template: 'typescript/stores/saga.ts', role: 'saga', purpose: 'saga step tracker: resume and compensation, steps kept by the store' };

/** What index.ts re-exports from the store-neutral saga.ts (in prettier's layout: too long for one line). */
export const SAGA_EXPORTS = `export {
  PermanentStepError,
  SagaCompensatedError,
  SagaTracker,
  type SagaStep,
  type StepContext,
  type StepStore,
} from './saga.js';`;
