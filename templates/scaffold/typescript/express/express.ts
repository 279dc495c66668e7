import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { isStorable, type ActiveClaim, type IdempotencyCore } from './core.js';
import { computeFingerprint, pickFields } from './fingerprint.js';
import { deriveKey, parseIdempotencyKey } from './keys.js';
import { problemFor, type Problem } from './problems.js';
import {
  LeaseLostError,
  StoreUnavailableError,
  type ActionSettings,
  type Scope,
  type StoredResponse,
} from './types.js';

export interface ExpressIdempotencyOptions {
  readonly core: IdempotencyCore;
  /**
   * Who owns keys for scoped actions (user, account or tenant id), typically from your auth middleware.
   * Return undefined when the request has no such principal; it is answered 401 and nothing is stored.
   */
  readonly principal: (req: Request, scope: Exclude<Scope, 'global'>) => string | undefined;
}

/**
 * Express middleware for one action: mount it after authentication and body parsing, right before the handler.
 * The handler's response is held back until it has been recorded, so a client never sees an answer that a retry
 * could contradict.
 */
export function idempotent(action: ActionSettings, options: ExpressIdempotencyOptions): RequestHandler {
  const { core } = options;
  const policy = core.policy;
  return async (req: Request, res: Response, next: NextFunction) => {
    const scope = action.scope === 'global' ? 'global' : options.principal(req, action.scope);
    if (scope === undefined || scope === '') return sendProblem(res, problemFor('principal-missing', policy));

    const body = parsedBody(req.body);
    let key: string;
    if (action.key.source === 'derived') {
      const values = pickFields(action.key.from ?? action.significantFields, {
        params: req.params,
        body,
        query: req.query,
      });
      if (Object.values(values).some((value) => value === null))
        return sendProblem(res, problemFor('key-missing', policy));
      key = deriveKey(action.codeName, values);
    } else {
      const parsed = parseIdempotencyKey(req.headers[policy.keyHeader.toLowerCase()], policy.maxKeyLength);
      if (!parsed.ok)
        return sendProblem(
          res,
          problemFor(parsed.problem === 'missing' ? 'key-missing' : 'key-invalid', policy),
        );
      key = parsed.key;
    }
    const fingerprint = computeFingerprint({
      method: action.method ?? req.method,
      route: action.route,
      fields: pickFields(action.significantFields, { params: req.params, body, query: req.query }),
    });

    let decision;
    try {
      decision = await core.begin(action, { scope, key, fingerprint });
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
      case 'in-flight':
        return sendProblem(res, problemFor('in-flight', policy, decision.retryAfterSeconds));
      case 'execute':
        holdResponse(res, decision.claim, policy.replayedHeaders, policy);
        res.locals.idempotency = { key, signal: decision.claim.signal };
        return next();
    }
  };
}

/** Webhook frameworks often keep the raw body (for signature checks); key and fingerprint fields come from its JSON. */
function parsedBody(body: unknown): unknown {
  if (Buffer.isBuffer(body) || typeof body === 'string') {
    try {
      return JSON.parse(body.toString()) as unknown;
    } catch {
      return undefined;
    }
  }
  return body;
}

type Chunk = string | Buffer | Uint8Array;
type Callback = (error?: Error | null) => void;

/**
 * Buffers everything the handler writes, records it (or releases the claim), and only then lets it reach the
 * socket. writeHead is deferred too, so nothing is flushed before the record is durable.
 */
function holdResponse(
  res: Response,
  claim: ActiveClaim,
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
    } else if (headers) {
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
  claim: ActiveClaim,
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
    // Not recorded, so not sent: the client retries and gets either the recorded result or a fresh, fenced attempt.
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    if (error instanceof LeaseLostError) return sendProblem(res, problemFor('lease-lost', policy));
    if (error instanceof StoreUnavailableError)
      return sendProblem(res, problemFor('store-unavailable', policy));
    return sendProblem(res, problemFor('store-unavailable', policy));
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
