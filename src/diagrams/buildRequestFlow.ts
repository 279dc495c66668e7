import { formatDuration } from '../config/duration.js';
import type { ActionDesign, DetectionPolicy, KeyPolicy, ResponsePolicy, StackDesign } from '../model/types.js';
import type { FlowEdge, FlowGraph, FlowNode, Label } from './graph.js';

/** The slice of the model the flowchart reads (tests build just this). */
export interface RequestFlowInputs {
  keys: Pick<KeyPolicy, 'header'>;
  responses: Pick<
    ResponsePolicy,
    'mismatchStatus' | 'inFlightStatus' | 'inFlight' | 'inFlightWaitMs' | 'retryAfterSeconds' | 'storeUnavailableStatus' | 'replayHeader'
  >;
  detection: Pick<DetectionPolicy, 'storeTimeoutMs'>;
  actions: ReadonlyArray<Pick<ActionDesign, 'trigger' | 'provider'>>;
  /** plain: the idempotent(fn) wrapper, which returns the stored result or throws, and answers no HTTP. */
  stack?: Pick<StackDesign, 'plain' | 'worker'>;
}

/**
 * The request-handling decision flowchart, drawn from the configured policies rather than the
 * spec's sample: the mismatch status, whether a duplicate in flight waits or is rejected, the
 * Retry-After value, the store time-out that turns into a fail-closed 503, and the split between
 * errors that release the claim and outcomes that are stored for replay.
 */
export function buildRequestFlow(model: RequestFlowInputs): FlowGraph {
  if (model.stack?.worker) return buildWorkerFlow(model);
  if (model.stack?.plain) return buildWrapperFlow(model);
  const r = model.responses;
  const retryAfter = `Retry-After: ${r.retryAfterSeconds}`;
  const entry = model.actions.every((a) => a.trigger === 'http' || a.trigger === 'webhook') ? 'request' : 'request or message';
  const providers = model.actions.some((a) => a.provider !== undefined);
  return buildClaimFlow(model, {
    receive: `${entry} with ${model.keys.header}`,
    validKey: 'key valid?',
    badKey: '400 problem+json',
    invalid: 'missing or malformed',
    storeDown: [`${r.storeUnavailableStatus} + ${retryAfter}`, 'fail closed'],
    mismatch: [`${r.mismatchStatus} problem+json`, 'stored body never returned'],
    replay: ['replay stored response', `+ ${r.replayHeader}: true`],
    busy: [`${r.inFlightStatus} + ${retryAfter}`, 'still in progress'],
    execute: 'execute action',
    persist: ['store response as COMPLETED', 'then send it'],
    release: providers ? ['release claim: a retry re-executes', 'with the same provider keys'] : ['release claim', 'a retry re-executes'],
    stored: ['success or', 'definitive 4xx'],
    released: 'throws or 5xx',
  });
}

/**
 * The decisions of consumers/handler.ts (and cron/guard.ts, whose outcomes are named beside them): no key to
 * validate (the message id is hashed when it does not fit), no fingerprint to compare (it is derived from the key), and
 * every ending is an acknowledgement or its absence.
 */
function buildWorkerFlow(model: RequestFlowInputs): FlowGraph {
  const consumers = model.actions.some((a) => a.trigger === 'consumer');
  const crons = model.actions.some((a) => a.trigger === 'cron');
  const both = consumers && crons;
  const providers = model.actions.some((a) => a.provider !== undefined);
  const nodes: FlowNode[] = [
    { id: 'receive', shape: 'rounded', label: both ? ['message delivered', 'or slot fired'] : consumers ? 'message delivered' : 'slot fired' },
    { id: 'key', shape: 'rect', label: both ? ['key: action + message id', 'or job + slot'] : consumers ? 'key: action + message id' : 'key: job + slot' },
    { id: 'claim', shape: 'decision', label: 'claim key' },
    { id: 'storeDown', shape: 'rect', label: ['throw StoreUnavailableError', consumers ? 'not acknowledged' : 'run fails'] },
    { id: 'status', shape: 'decision', label: 'status?' },
    { id: 'duplicate', shape: 'rect', label: consumers ? ["'duplicate'", 'acknowledge, do not run'] : ["'duplicate'", 'do not run'] },
    { id: 'busy', shape: 'rect', label: both ? ["'busy': not acknowledged", "or 'overlap': skip"] : consumers ? ["'busy'", 'not acknowledged, redelivered'] : ["'overlap'", 'skip this fire'] },
    { id: 'reclaim', shape: 'decision', label: 'CAS reclaim' },
    { id: 'execute', shape: 'rect', label: both ? 'run handler or job' : consumers ? 'run the handler' : 'run the job' },
    { id: 'persist', shape: 'rect', label: consumers ? ['record COMPLETED', "'done': acknowledge"] : ['record COMPLETED', "'ran'"] },
    {
      id: 'release',
      shape: 'rect',
      label: consumers
        ? providers ? ['release claim, not acknowledged', 'redelivery re-runs, same provider keys'] : ['release claim, not acknowledged', 'redelivery re-runs']
        : ['release claim, rethrow', 'a re-fire of the slot runs'],
    },
  ];
  const edges: FlowEdge[] = [
    { from: 'receive', to: 'key' },
    { from: 'key', to: 'claim' },
    { from: 'claim', to: 'storeDown', label: ['store down or', `slower than ${formatDuration(model.detection.storeTimeoutMs)}`] },
    { from: 'claim', to: 'execute', label: 'new key' },
    { from: 'claim', to: 'status', label: 'key exists' },
    { from: 'status', to: 'duplicate', label: consumers ? ['COMPLETED', 'or FAILED'] : 'COMPLETED' },
    { from: 'status', to: 'busy', label: ['PROCESSING', 'lease live'] },
    { from: 'status', to: 'reclaim', label: ['PROCESSING', 'lease expired'] },
    { from: 'reclaim', to: 'execute', label: ['won', 'new fencing token'] },
    { from: 'reclaim', to: 'busy', label: 'lost' },
    { from: 'execute', to: 'persist', label: 'returns' },
    { from: 'execute', to: 'release', label: 'throws' },
  ];
  if (consumers) {
    nodes.push({ id: 'dead', shape: 'rect', label: ['record FAILED', "'dead': dead-letter, acknowledge"] });
    edges.push({ from: 'execute', to: 'dead', label: ['throws on the', 'last attempt'] });
  }
  return { kind: 'flowchart', direction: 'TD', nodes, edges };
}

/**
 * The same decisions as plain.ts over core.ts runOnce takes them: a call, not a request; each refusal is an error the
 * caller catches, and what is stored is the function's JSON result.
 */
function buildWrapperFlow(model: RequestFlowInputs): FlowGraph {
  const providers = model.actions.some((a) => a.provider !== undefined);
  return buildClaimFlow(model, {
    // Parentheses would be escaped in a Mermaid label: "wrapped function", not "idempotent(fn)".
    receive: ['wrapped function called', 'with scope, key and input'],
    validKey: 'caller and key valid?',
    badKey: ['throw InvalidKeyError', 'or PrincipalMissingError'],
    invalid: ['no principal, or key', 'missing or malformed'],
    storeDown: ['throw StoreUnavailableError', 'fail closed'],
    mismatch: ['throw MismatchError', 'stored result never returned'],
    replay: ['return the stored', 'JSON result'],
    busy: ['throw InFlightError', `retryAfterSeconds ≤ ${model.responses.retryAfterSeconds}`],
    execute: 'run the function',
    persist: ['store the JSON result', 'then return it'],
    release: providers ? ['release claim, rethrow: a retry', 're-executes with the same provider keys'] : ['release claim, rethrow', 'a retry re-executes'],
    stored: 'returns',
    released: 'throws',
  });
}

/** What a flow with a caller's key says in its boxes and on its edges (an HTTP request, or a wrapped call). */
interface ClaimFlowWords {
  receive: Label;
  validKey: string;
  badKey: Label;
  /** The edge to badKey. */
  invalid: Label;
  storeDown: Label;
  mismatch: Label;
  replay: Label;
  busy: Label;
  execute: string;
  persist: Label;
  release: Label;
  /** The edges from execute to persist and to release. */
  stored: Label;
  released: Label;
}

/**
 * The decisions a caller's key goes through, the same for a request and a wrapped call: validate the key, claim it,
 * compare the fingerprint, replay or wait or refuse by status, reclaim a lapsed lease, and store or release the
 * outcome. Only the words differ.
 */
function buildClaimFlow(model: RequestFlowInputs, words: ClaimFlowWords): FlowGraph {
  const r = model.responses;
  const nodes: FlowNode[] = [
    { id: 'receive', shape: 'rounded', label: words.receive },
    { id: 'validKey', shape: 'decision', label: words.validKey },
    { id: 'badKey', shape: 'rect', label: words.badKey },
    // Diamonds grow with their label, so questions stay short and detail goes on edges and boxes.
    { id: 'claim', shape: 'decision', label: 'claim (caller, key)' },
    { id: 'storeDown', shape: 'rect', label: words.storeDown },
    { id: 'fingerprint', shape: 'decision', label: 'same fingerprint?' },
    { id: 'mismatch', shape: 'rect', label: words.mismatch },
    { id: 'status', shape: 'decision', label: 'status?' },
    { id: 'replay', shape: 'rect', label: words.replay },
    { id: 'busy', shape: 'rect', label: words.busy },
    { id: 'reclaim', shape: 'decision', label: 'CAS reclaim' },
    { id: 'execute', shape: 'rect', label: words.execute },
    { id: 'persist', shape: 'rect', label: words.persist },
    { id: 'release', shape: 'rect', label: words.release },
  ];
  const edges: FlowEdge[] = [
    { from: 'receive', to: 'validKey' },
    { from: 'validKey', to: 'badKey', label: words.invalid },
    { from: 'validKey', to: 'claim', label: 'yes' },
    { from: 'claim', to: 'storeDown', label: ['store down or', `slower than ${formatDuration(model.detection.storeTimeoutMs)}`] },
    { from: 'claim', to: 'execute', label: 'new key' },
    { from: 'claim', to: 'fingerprint', label: 'key exists' },
    { from: 'fingerprint', to: 'mismatch', label: 'no' },
    { from: 'fingerprint', to: 'status', label: 'yes' },
    { from: 'status', to: 'replay', label: 'COMPLETED' },
  ];
  if (r.inFlight === 'wait') {
    // Waiting turns most double-clicks into a replay instead of an error the client must handle.
    nodes.push({ id: 'wait', shape: 'decision', label: `done in ${formatDuration(r.inFlightWaitMs)}?` });
    edges.push(
      { from: 'status', to: 'wait', label: ['PROCESSING', 'lease live'] },
      { from: 'wait', to: 'replay', label: 'yes' },
      { from: 'wait', to: 'busy', label: 'no' },
    );
  } else {
    edges.push({ from: 'status', to: 'busy', label: ['PROCESSING', 'lease live'] });
  }
  edges.push(
    { from: 'status', to: 'reclaim', label: ['PROCESSING', 'lease expired'] },
    { from: 'reclaim', to: 'execute', label: ['won', 'new fencing token'] },
    { from: 'reclaim', to: 'busy', label: 'lost' },
    { from: 'execute', to: 'persist', label: words.stored },
    { from: 'execute', to: 'release', label: words.released },
  );
  return { kind: 'flowchart', direction: 'TD', nodes, edges };
}
