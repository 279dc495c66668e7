import type { FigureInputs } from '../../src/diagrams/buildFigures.js';
import type { DesignModel } from '../../src/model/types.js';

/**
 * Hand-built model slices shaped like the fixture configs (until buildDesign lands these are what the
 * diagram tests run on). Only the fields the diagrams read are filled in.
 */
type Responses = FigureInputs['responses'];

const responses = (overrides: Partial<Responses> = {}): Responses => ({
  mismatchStatus: 422,
  inFlightStatus: 409,
  inFlight: 'reject',
  inFlightWaitMs: 0,
  retryAfterSeconds: 1,
  storeUnavailableStatus: 503,
  replayHeader: 'Idempotent-Replayed',
  ...overrides,
});

const base = (overrides: Partial<FigureInputs>): FigureInputs => ({
  keys: { header: 'Idempotency-Key' },
  responses: responses(),
  detection: { storeTimeoutMs: 250 },
  actions: [{ trigger: 'http' }],
  diagrams: { flowchart: true, flowchartReason: 'several actions and policies' },
  sagas: [],
  ...overrides,
});

/** fixtures/configs/nestjs-adyen-saga.json: a three-step saga with an Adyen step, 422, reject. */
export const nestjsAdyenSaga = base({
  actions: [{ trigger: 'http', provider: 'adyen' }, { trigger: 'webhook', provider: 'adyen' }, { trigger: 'consumer', provider: 'adyen' }],
  detection: { storeTimeoutMs: 100 },
  sagas: [
    {
      action: 'submitOrder',
      slug: 'submit-order',
      steps: [
        { name: 'reserveInventory', compensation: 'releaseInventory' },
        { name: 'authorisePayment', compensation: 'cancelAuthorisation' },
        { name: 'confirmOrder' },
      ],
    },
  ],
});

/** fixtures/configs/express-stripe-payments.json: HTTP + Stripe, the spec's original 409 contract, waiting duplicates. */
export const expressStripe = base({
  actions: [{ trigger: 'http', provider: 'stripe' }, { trigger: 'webhook', provider: 'stripe' }],
  responses: responses({ mismatchStatus: 409, inFlight: 'wait', inFlightWaitMs: 2_000, retryAfterSeconds: 2 }),
  sagas: [
    {
      action: 'checkout',
      slug: 'checkout',
      steps: [
        { name: 'createOrder', compensation: 'cancelOrder' },
        { name: 'chargeCard', compensation: 'refundCharge' },
        { name: 'sendReceipt' },
      ],
    },
  ],
});

/** fixtures/configs/minimal-one-action.json: one plain endpoint; the flowchart does not pay off. */
export const minimalOneAction = base({
  diagrams: { flowchart: false, flowchartReason: 'one action without steps: the response table says it all' },
});

/** Hostile names: markup, quotes, pipes, brackets, Mermaid keywords and entity codes. */
export const hostileNames = base({
  keys: { header: 'X-Key"|<b>' },
  actions: [{ trigger: 'cron' }],
  sagas: [
    {
      action: '<img src=x onerror=alert(1)>',
      slug: 'img-src-x-onerror-alert-1',
      steps: [
        { name: '<img src=x onerror=alert(1)>', compensation: 'undo "it" | now; {x} [y] #quot; &amp; -->' },
        { name: 'end', compensation: 'a\\b `c`' },
        { name: 'step ]) with } brackets' },
      ],
    },
    // Same slug twice must still give distinct figure ids.
    { action: 'duplicate', slug: 'img-src-x-onerror-alert-1', steps: [{ name: 'one' }, { name: 'two', compensation: 'unused' }] },
  ],
});

export const allModels: Record<string, FigureInputs> = { nestjsAdyenSaga, expressStripe, minimalOneAction, hostileNames };

// The real model must keep satisfying the slice the diagrams read.
export const modelFits = (model: DesignModel): FigureInputs => model;
