import type { Context, MiddlewareHandler } from 'hono';
import { isStorable, type Claim, type Decision, type IdempotencyCore } from './core.js';
import { identifyRequest, methodMatches } from './identify.js';
import { failureProblem, problemFor, type Problem } from './problems.js';
import {
  StoreUnavailableError,
  type ActionSettings,
  type IdempotencyContext,
  type IdempotencyPolicy,
  type Scope,
  type StoredResponse,
} from './types.js';

export type { IdempotencyContext } from './types.js';

type Principal = string | number | undefined;

export interface HonoIdempotencyOptions {
  readonly core: IdempotencyCore;
  /**
   * Who owns keys for scoped actions (user, account or tenant id), e.g. `c.get('jwtPayload')?.sub` after
   * hono/jwt. Return undefined when the request has no such principal; it is answered 401 and nothing is stored.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app's Env: the resolver reads its own variables
  readonly principal: (c: Context<any>, scope: Exclude<Scope, 'global'>) => Principal | Promise<Principal>;
}

// Keyed by the Web Request, which lives exactly as long as the request.
const contexts = new WeakMap<Request, IdempotencyContext>();

/**
 * The running claim of this request, inside the handler of an idempotent route (`idempotencyOf(c)`): scope, key,
 * fencing token, attempt, lease signal and (transactional mode) the transaction's `db`. The same shape in every adapter.
 */
export function idempotencyOf(c: { req: { raw: Request } }): IdempotencyContext | undefined {
  return contexts.get(c.req.raw);
}

/**
 * Hono middleware for one action, on Node (@hono/node-server) and on Web-standard runtimes alike: it reads only the
 * Web Request (`c.req.raw`) and the Web Response the handler produced (`c.res`). Mount it in the route after
 * authentication: `app.post('/payments', idempotency.createPayment, handler)`. The response is read to its last
 * byte, recorded, and only then handed on, so a client never sees an answer that a retry could contradict.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- mountable on any app's Env
export function idempotent(action: ActionSettings, options: HonoIdempotencyOptions): MiddlewareHandler<any> {
  const { core } = options;
  const policy = core.policy;
  return async (c, next) => {
    const request = c.req.raw;
    if (!methodMatches(action, request.method)) return next();
    const principal = action.scope === 'global' ? 'global' : await options.principal(c, action.scope);
    const identified = identifyRequest(action, policy, {
      method: request.method,
      keyHeader: request.headers.get(policy.keyHeader) ?? undefined,
      params: c.req.param(),
      body: await requestBody(request),
      query: c.req.query(),
      principal: () => principal,
    });
    if (identified.kind === 'pass') return next();
    if (identified.kind === 'refuse') return problemResponse(identified.problem);

    let decision: Decision;
    try {
      decision = await core.begin(action, identified.request);
    } catch (error) {
      if (error instanceof StoreUnavailableError)
        return problemResponse(problemFor('store-unavailable', policy));
      throw error;
    }
    switch (decision.kind) {
      case 'replay':
        return replayResponse(decision.response, policy.replayHeader);
      case 'mismatch':
        return problemResponse(problemFor('key-mismatch', policy));
      case 'not-replayable':
        return problemResponse(problemFor('response-not-replayable', policy));
      case 'in-flight':
        return problemResponse(problemFor('in-flight', policy, decision.retryAfterSeconds));
      case 'execute': {
        const { claim } = decision;
        contexts.set(request, claim.context);
        try {
          // Hono catches a thrown handler itself and leaves its error response (500, or an HTTPException's) in c.res.
          await next();
        } catch (error) {
          await claim.release();
          throw error;
        }
        const settled = await settleResponse(claim, c.res, policy);
        // Replaced, not merged: Hono would otherwise copy the handler's headers onto a failure problem.
        c.res = undefined;
        c.res = settled;
        return undefined;
      }
    }
  };
}

/** Key and fingerprint fields come from the JSON body, read from a clone so the handler can still read the original. */
async function requestBody(request: Request): Promise<unknown> {
  if (request.body === null) return undefined;
  const text = await request.clone().text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Reads the handler's Response to its last byte and records it (or releases the claim for a 5xx), then answers with
 * the same bytes; when the record cannot be written, with the problem that says what is known instead.
 */
async function settleResponse(
  claim: Claim,
  response: Response,
  policy: IdempotencyPolicy,
): Promise<Response> {
  let body: Buffer;
  try {
    body = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    await claim.release();
    throw error;
  }
  const rebuilt = () =>
    new Response(bodyFor(response.status, body), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  if (!isStorable(response.status)) {
    await claim.release();
    return rebuilt();
  }
  const headers: Record<string, string> = {};
  for (const name of policy.replayedHeaders) {
    const value = response.headers.get(name);
    if (value !== null) headers[name.toLowerCase()] = value;
  }
  try {
    await claim.complete({ status: response.status, headers, body });
  } catch (error) {
    return problemResponse(failureProblem(error, policy));
  }
  return rebuilt();
}

/** A copy the Response owns (a Buffer may view a shared pool); 204/205/304 must have a null body. */
function bodyFor(status: number, body: Buffer) {
  return body.length === 0 && (status === 204 || status === 205 || status === 304)
    ? null
    : new Uint8Array(body);
}

function replayResponse(response: StoredResponse, replayHeader: string): Response {
  const headers = new Headers(response.headers);
  headers.set(replayHeader, 'true');
  return new Response(bodyFor(response.status, response.body), { status: response.status, headers });
}

function problemResponse(problem: Problem): Response {
  const headers = new Headers({ 'content-type': 'application/problem+json' });
  if (problem.retryAfterSeconds !== undefined) headers.set('retry-after', String(problem.retryAfterSeconds));
  const body = JSON.stringify({
    type: problem.type,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
  });
  return new Response(body, { status: problem.status, headers });
}
