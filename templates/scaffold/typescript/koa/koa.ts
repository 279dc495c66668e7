import { URLSearchParams } from 'node:url';
import type { Context, Middleware, Next } from 'koa';
import { isStorable, type Claim, type Decision, type IdempotencyCore } from './core.js';
import { distinctHeaders, identifyRequest, methodMatches } from './identify.js';
import { failureProblem, problemFor, type Problem } from './problems.js';
import {
  StoreUnavailableError,
  type ActionSettings,
  type IdempotencyContext,
  type Scope,
  type StoredResponse,
} from './types.js';

export type { IdempotencyContext } from './types.js';

type Principal = string | number | undefined;

export interface KoaIdempotencyOptions {
  readonly core: IdempotencyCore;
  /**
   * Who owns keys for scoped actions (user, account or tenant id), typically `ctx.state.user` from your auth
   * middleware. Return undefined when the request has no such principal; it is answered 401 and nothing is stored.
   */
  readonly principal: (ctx: Context, scope: Exclude<Scope, 'global'>) => Principal | Promise<Principal>;
}

// Per request, gone with it; ctx.state.idempotency holds the same object for code that reads state.
const contexts = new WeakMap<Context, IdempotencyContext>();

/**
 * The running claim of this request, inside the handler of an idempotent route: scope, key, fencing token,
 * attempt, lease signal and (transactional mode) the transaction's `db`. The same shape in every adapter.
 */
export function idempotencyOf(ctx: Context): IdempotencyContext | undefined {
  return contexts.get(ctx);
}

/**
 * Koa middleware for one action: mount it after authentication (and your body parser, if any) right before the
 * handler, e.g. `router.post('/payments', idempotency.createPayment, handler)`. Everything downstream runs inside
 * `await next()`; the body it leaves in `ctx.body` is turned into bytes, recorded, and only then handed back to Koa
 * to send, so a client never sees an answer that a retry could contradict.
 */
export function idempotent(action: ActionSettings, options: KoaIdempotencyOptions): Middleware {
  const { core } = options;
  const policy = core.policy;
  return async (ctx: Context, next: Next) => {
    if (!methodMatches(action, ctx.method)) return next();
    const principal = action.scope === 'global' ? 'global' : await options.principal(ctx, action.scope);
    const name = policy.keyHeader.toLowerCase();
    const identified = identifyRequest(action, policy, {
      method: ctx.method,
      keyHeader: distinctHeaders(ctx.req)?.[name] ?? ctx.req.headers[name],
      params: (ctx as Context & { params?: unknown }).params,
      body: await requestBody(ctx),
      query: ctx.query,
      principal: () => principal,
    });
    if (identified.kind === 'pass') return next();
    if (identified.kind === 'refuse') return sendProblem(ctx, identified.problem);

    let decision: Decision;
    try {
      decision = await core.begin(action, identified.request);
    } catch (error) {
      if (error instanceof StoreUnavailableError)
        return sendProblem(ctx, problemFor('store-unavailable', policy));
      throw error;
    }
    switch (decision.kind) {
      case 'replay':
        return sendReplay(ctx, decision.response, policy.replayHeader);
      case 'mismatch':
        return sendProblem(ctx, problemFor('key-mismatch', policy));
      case 'not-replayable':
        return sendProblem(ctx, problemFor('response-not-replayable', policy));
      case 'in-flight':
        return sendProblem(ctx, problemFor('in-flight', policy, decision.retryAfterSeconds));
      case 'execute':
        return runClaimed(ctx, next, decision.claim, policy);
    }
  };
}

async function runClaimed(
  ctx: Context,
  next: Next,
  claim: Claim,
  policy: IdempotencyCore['policy'],
): Promise<void> {
  contexts.set(ctx, claim.context);
  ctx.state['idempotency'] = claim.context;
  try {
    await next();
  } catch (error) {
    const status = httpErrorStatus(error);
    if (status === undefined || !isStorable(status)) {
      // A crash or a 5xx: give the key back so a retry runs again; Koa's error handling answers as usual.
      await claim.release();
      throw error;
    }
    // ctx.throw(402, 'card declined'): a definitive answer, recorded the way Koa would have rendered it.
    renderHttpError(ctx, error as Error & { expose?: boolean; headers?: Record<string, string> }, status);
  }
  let body: Buffer;
  try {
    body = await bodyBytes(ctx);
  } catch (error) {
    await claim.release();
    throw error;
  }
  if (!isStorable(ctx.status)) {
    await claim.release();
    return setBody(ctx, body);
  }
  const headers: Record<string, string> = {};
  for (const name of policy.replayedHeaders) {
    const value = ctx.response.get(name);
    if (value !== '' && value !== undefined)
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  try {
    await claim.complete({ status: ctx.status, headers, body });
  } catch (error) {
    // Not recorded, so not sent. Each answer says only what is known: fenced out, provably not processed, or unknown.
    for (const name of Object.keys(ctx.response.headers)) ctx.remove(name);
    return sendProblem(ctx, failureProblem(error, policy));
  }
  setBody(ctx, body);
}

/** The bytes go back as a Buffer (Koa keeps the content type already set); an empty 204/304 stays without a body. */
function setBody(ctx: Context, body: Buffer): void {
  const status = ctx.status;
  ctx.body = body.length === 0 && (status === 204 || status === 205 || status === 304) ? null : body;
  ctx.status = status;
}

/**
 * Koa parses no bodies. When no body parser ran before this middleware, the raw bytes are read here and left for
 * the handler the way @koa/bodyparser leaves them (`ctx.request.rawBody`, `ctx.request.body`), so key and
 * fingerprint fields come from the JSON and a later body parser sees the body as already parsed.
 */
const MAX_BODY_BYTES = 1024 * 1024;

async function requestBody(ctx: Context): Promise<unknown> {
  const request = ctx.request as Context['request'] & { body?: unknown; rawBody?: string };
  if (request.body !== undefined) return request.body;
  if (!ctx.request.length && ctx.get('transfer-encoding') === '') return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += bytes.length;
    // Before any claim, so nothing is stored; the same default limit as @koa/bodyparser's JSON parser.
    if (size > MAX_BODY_BYTES) ctx.throw(413, 'request body too large');
    chunks.push(bytes);
  }
  const raw = Buffer.concat(chunks).toString('utf8');
  request.rawBody = raw;
  let parsed: unknown = raw;
  if (ctx.is('json')) {
    try {
      parsed = raw === '' ? {} : (JSON.parse(raw) as unknown);
    } catch {
      parsed = raw;
    }
  } else if (ctx.is('urlencoded')) {
    // A field sent twice becomes an array, as @koa/bodyparser parses it: a repeated key field is then refused (400)
    // instead of the last value winning unseen.
    const fields: Record<string, string | string[]> = {};
    new URLSearchParams(raw).forEach((value, key) => {
      const seen = fields[key];
      fields[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
    });
    parsed = fields;
  }
  // Other types stay the raw text: the stream is read, so a later parser could not read it again.
  request.body = parsed;
  return parsed;
}

/** Whatever the handler put in ctx.body, as the exact bytes Koa would send (objects as JSON, streams drained). */
async function bodyBytes(ctx: Context): Promise<Buffer> {
  const body: unknown = ctx.body;
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  // A Response or Blob by its shape (typings before @types/node 18 declare neither as a global); a web
  // ReadableStream is async-iterable on Node, so the loop below drains it.
  if (typeof (body as { arrayBuffer?: unknown }).arrayBuffer === 'function')
    return Buffer.from(await (body as { arrayBuffer(): Promise<ArrayBuffer> }).arrayBuffer());
  if (typeof body === 'object' && body !== null && Symbol.asyncIterator in body) {
    const chunks: Buffer[] = [];
    for await (const chunk of body as AsyncIterable<unknown>)
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  }
  return Buffer.from(JSON.stringify(body), 'utf8');
}

function httpErrorStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const status =
    (error as { status?: unknown; statusCode?: unknown }).status ??
    (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

function renderHttpError(
  ctx: Context,
  error: Error & { expose?: boolean; headers?: Record<string, string> },
  status: number,
): void {
  for (const name of Object.keys(ctx.response.headers)) ctx.remove(name);
  if (error.headers) ctx.set(error.headers);
  ctx.status = status;
  ctx.type = 'text';
  ctx.body = error.expose ? error.message : ctx.message;
}

function sendReplay(ctx: Context, response: StoredResponse, replayHeader: string): void {
  ctx.status = response.status;
  for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
  ctx.set(replayHeader, 'true');
  // A Buffer is sent as is (Koa adds no charset to a type that is already set): the recorded bytes, exactly.
  setBody(ctx, response.body);
}

function sendProblem(ctx: Context, problem: Problem): void {
  ctx.status = problem.status;
  ctx.set('content-type', 'application/problem+json');
  if (problem.retryAfterSeconds !== undefined) ctx.set('retry-after', String(problem.retryAfterSeconds));
  ctx.body = Buffer.from(
    JSON.stringify({
      type: problem.type,
      title: problem.title,
      status: problem.status,
      detail: problem.detail,
    }),
    'utf8',
  );
}
