import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { isStorable, type Claim, type Decision, type IdempotencyCore } from './core.js';
import { distinctHeaders, identifyRequest } from './identify.js';
import { failureProblem, problemFor, type Problem } from './problems.js';
import {
  StoreUnavailableError,
  type ActionSettings,
  type IdempotencyContext,
  type Scope,
  type StoredResponse,
} from './types.js';

export type { IdempotencyContext } from './types.js';

export interface ExpressIdempotencyOptions {
  readonly core: IdempotencyCore;
  /**
   * Who owns keys for scoped actions (user, account or tenant id), typically from your auth middleware.
   * Return undefined when the request has no such principal; it is answered 401 and nothing is stored.
   */
  readonly principal: (req: Request, scope: Exclude<Scope, 'global'>) => string | number | undefined;
}

// Per request, gone with it; res.locals.idempotency holds the same object for templates and older code.
const contexts = new WeakMap<Request, IdempotencyContext>();

/**
 * The running claim of this request, inside the handler of an idempotent route: scope, key, fencing token,
 * attempt, lease signal and (transactional mode) the transaction's `db`. Pass it to `saga.run(context, steps)`
 * and to the provider key helpers. The same shape in every adapter.
 */
export function idempotencyOf(req: Request): IdempotencyContext | undefined {
  return contexts.get(req);
}

/**
 * Wraps an async handler so a thrown error or rejected promise reaches `next` on Express 4 as well as 5 (Express 4
 * ignores returned promises: without this the request hangs and its claim is held until the lease lapses).
 */
export function asyncHandler<Req extends Request = Request, Res extends Response = Response>(
  handler: (req: Req, res: Res, next: NextFunction) => Promise<unknown>,
): (req: Req, res: Res, next: NextFunction) => void {
  return (req, res, next) => {
    handler(req, res, next).catch(next);
  };
}

/**
 * Express middleware for one action: mount it after authentication and body parsing, right before the handler.
 * The handler's response is held back until it has been recorded, so a client never sees an answer that a retry
 * could contradict. Requests with another method pass straight through (no record).
 */
export function idempotent(action: ActionSettings, options: ExpressIdempotencyOptions): RequestHandler {
  const { core } = options;
  const policy = core.policy;
  const handle = async (req: Request, res: Response, next: NextFunction) => {
    const identified = identifyRequest(action, policy, {
      method: req.method,
      keyHeader:
        distinctHeaders(req)?.[policy.keyHeader.toLowerCase()] ?? req.headers[policy.keyHeader.toLowerCase()],
      params: req.params,
      body: req.body,
      query: req.query,
      principal: () => (action.scope === 'global' ? 'global' : options.principal(req, action.scope)),
    });
    if (identified.kind === 'pass') return next();
    if (identified.kind === 'refuse') return sendProblem(res, identified.problem);

    let decision: Decision;
    try {
      decision = await core.begin(action, identified.request);
    } catch (error) {
      if (error instanceof StoreUnavailableError)
        return sendProblem(res, problemFor('store-unavailable', policy));
      throw error;
    }
    switch (decision.kind) {
      case 'replay':
        return sendReplay(res, decision.response, policy.replayHeader);
      case 'mismatch':
        return sendProblem(res, problemFor('key-mismatch', policy));
      case 'not-replayable':
        return sendProblem(res, problemFor('response-not-replayable', policy));
      case 'in-flight':
        return sendProblem(res, problemFor('in-flight', policy, decision.retryAfterSeconds));
      case 'execute': {
        const { claim } = decision;
        holdResponse(res, claim, policy.replayedHeaders, policy);
        contexts.set(req, claim.context);
        res.locals.idempotency = claim.context;
        // Express 4 does not catch async errors: route them to the error handler, which answers 500 and releases.
        return next();
      }
    }
  };
  return (req, res, next) => {
    handle(req, res, next).catch(next);
  };
}

type Chunk = string | Buffer | Uint8Array;
type Callback = (error?: Error | null) => void;

/**
 * Buffers everything the handler writes, records it (or releases the claim), and only then lets it reach the
 * socket. writeHead is deferred too, so nothing is flushed before the record is durable.
 */
function holdResponse(
  res: Response,
  claim: Claim,
  replayedHeaders: readonly string[],
  policy: ExpressIdempotencyOptions['core']['policy'],
): void {
  const chunks: Buffer[] = [];
  const original = { writeHead: res.writeHead, write: res.write, end: res.end };
  const toBuffer = (chunk: Chunk, encoding?: BufferEncoding) =>
    typeof chunk === 'string'
      ? Buffer.from(chunk, encoding ?? 'utf8')
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  let ended = false;

  res.writeHead = function (this: Response, status: number, ...rest: unknown[]) {
    res.statusCode = status;
    const headers = rest.find((item) => typeof item === 'object' && item !== null);
    if (typeof rest[0] === 'string') res.statusMessage = rest[0];
    if (Array.isArray(headers)) {
      for (let i = 0; i + 1 < headers.length; i += 2)
        res.setHeader(String(headers[i]), headers[i + 1] as string);
    } else if (typeof headers === 'object' && headers !== null) {
      for (const [name, value] of Object.entries(headers))
        if (value !== undefined) res.setHeader(name, value as string);
    }
    return this;
  } as Response['writeHead'];

  res.write = function (chunk: Chunk, encodingOrCallback?: BufferEncoding | Callback, callback?: Callback) {
    chunks.push(toBuffer(chunk, typeof encodingOrCallback === 'string' ? encodingOrCallback : undefined));
    const done = typeof encodingOrCallback === 'function' ? encodingOrCallback : callback;
    if (done) queueMicrotask(() => done());
    return true;
  } as Response['write'];

  res.end = function (
    this: Response,
    chunk?: Chunk | Callback,
    encodingOrCallback?: BufferEncoding | Callback,
    callback?: Callback,
  ) {
    if (ended) return this;
    ended = true;
    if (chunk !== undefined && typeof chunk !== 'function') {
      chunks.push(toBuffer(chunk, typeof encodingOrCallback === 'string' ? encodingOrCallback : undefined));
    }
    const done = [chunk, encodingOrCallback, callback].find(
      (item): item is Callback => typeof item === 'function',
    );
    res.writeHead = original.writeHead;
    res.write = original.write;
    res.end = original.end;
    void settle(res, claim, Buffer.concat(chunks), replayedHeaders, policy).then(() => done?.());
    return this;
  } as Response['end'];
}

async function settle(
  res: Response,
  claim: Claim,
  body: Buffer,
  replayedHeaders: readonly string[],
  policy: ExpressIdempotencyOptions['core']['policy'],
): Promise<void> {
  const status = res.statusCode;
  if (!isStorable(status)) {
    // 5xx (the handler threw or failed) and caller-state statuses: give the key back so a retry runs again.
    await claim.release();
    res.end(body);
    return;
  }
  const headers: Record<string, string> = {};
  for (const name of replayedHeaders) {
    const value = res.getHeader(name);
    if (value !== undefined)
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  try {
    await claim.complete({ status, headers, body });
  } catch (error) {
    // Not recorded, so not sent. Each answer says only what is known: fenced out, provably not processed
    // (transactional mode rolled back), or outcome unknown (the action ran; retry later with the same key).
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    return sendProblem(res, failureProblem(error, policy));
  }
  res.end(body);
}

function sendReplay(res: Response, response: StoredResponse, replayHeader: string): void {
  res.statusCode = response.status;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  res.setHeader(replayHeader, 'true');
  res.setHeader('content-length', String(response.body.length));
  res.end(response.body);
}

function sendProblem(res: Response, problem: Problem): void {
  const body = Buffer.from(
    JSON.stringify({
      type: problem.type,
      title: problem.title,
      status: problem.status,
      detail: problem.detail,
    }),
    'utf8',
  );
  res.statusCode = problem.status;
  res.setHeader('content-type', 'application/problem+json');
  res.setHeader('content-length', String(body.length));
  if (problem.retryAfterSeconds !== undefined)
    res.setHeader('retry-after', String(problem.retryAfterSeconds));
  res.end(body);
}
