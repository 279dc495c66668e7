import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  isStorable,
  refusedRequest,
  type Claim,
  type Decision,
  type IdempotencyCore,
  type IdempotentRequest,
} from './core.js';
import { computeFingerprint, pickFields } from './fingerprint.js';
import { identifyRequest, methodMatches, type HttpRequestParts } from './identify.js';
import { parseIdempotencyKey } from './keys.js';
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

/** What a Pages Router API route receives (NextApiRequest has these); no import from next is needed. */
export type PagesApiRequest = IncomingMessage & {
  body?: unknown;
  query?: Partial<Record<string, string | string[]>>;
};

export interface NextIdempotencyOptions {
  readonly core: IdempotencyCore;
  /**
   * Who owns keys for scoped actions (user, account or tenant id). Route handlers pass their Request, Pages API
   * routes their req and res (next-auth's getServerSession(req, res, options) needs both), Server Actions nothing:
   * read the session the way the app does (`(await auth())?.user?.id`). Return undefined when there is no such
   * principal: a route answers 401, a Server Action throws; nothing is stored.
   */
  readonly principal: (
    request: Request | PagesApiRequest | undefined,
    scope: Exclude<Scope, 'global'>,
    response?: ServerResponse,
  ) => Principal | Promise<Principal>;
}

const contexts = new WeakMap<object, IdempotencyContext>();
/**
 * Server Actions have no request object: the running claim is found through the async call chain instead, in a cell
 * per claim that is emptied when the claim ends, so a timer or promise the handler left running sees no stale claim.
 */
type ClaimCell = { context?: IdempotencyContext };
const running = new AsyncLocalStorage<ClaimCell>();

/** Runs `work` (the handler, then the recording of its answer) with the claim held for it, until it settles. */
async function underClaim<T>(
  request: object,
  context: IdempotencyContext,
  work: (cell: ClaimCell) => Promise<T>,
): Promise<T> {
  const cell: ClaimCell = { context };
  contexts.set(request, context);
  try {
    return await work(cell);
  } finally {
    contexts.delete(request);
    delete cell.context;
  }
}

/**
 * The running claim inside a protected route handler, Pages API route or Server Action: scope, key, fencing token,
 * attempt, lease signal and (transactional mode) the transaction's `db`. The same shape in every adapter; pass the
 * Request (or req), or nothing inside a Server Action.
 */
export function idempotencyOf(request?: Request | PagesApiRequest): IdempotencyContext | undefined {
  return (request && contexts.get(request)) ?? running.getStore()?.context;
}

/** A Server Action's key is not in the Idempotency-Key grammar (1-255 printable ASCII, no comma or space). */
export class InvalidKeyError extends Error {
  constructor() {
    super('idempotency key is missing or malformed');
    this.name = 'InvalidKeyError';
  }
}

/** A scoped Server Action ran without an authenticated principal. */
export class PrincipalMissingError extends Error {
  constructor() {
    super('idempotency keys are scoped to the caller, and there is no authenticated caller');
    this.name = 'PrincipalMissingError';
  }
}

type RouteHandler<R extends Request, C> = (request: R, context: C) => Response | Promise<Response>;
type PagesHandler<Q extends PagesApiRequest, S extends ServerResponse> = (req: Q, res: S) => unknown;

/** One action's three wrappers: `export const POST = idempotency.createPayment.route(handler)`, and so on. */
export interface NextIdempotentAction {
  /** App Router route handler: `(request, { params })` → Response; the Response's bytes are recorded, then returned. */
  route<R extends Request, C>(handler: RouteHandler<R, C>): (request: R, context: C) => Promise<Response>;
  /** Pages Router API route `(req, res)`: everything written to res is held until it is recorded. */
  pages<Q extends PagesApiRequest, S extends ServerResponse>(
    handler: PagesHandler<Q, S>,
  ): (req: Q, res: S) => Promise<void>;
  /**
   * Server Action that takes the key as its first argument (the form or client creates it once per intent). The
   * first argument after the key is the input the significant fields are read from. Returns the function's
   * JSON-serialisable result, the stored one on a repeat; throws MismatchError, InFlightError, InvalidKeyError,
   * PrincipalMissingError or StoreUnavailableError instead of running twice.
   */
  action<A extends unknown[], T>(
    fn: (key: string, ...args: A) => Promise<T>,
  ): (key: string, ...args: A) => Promise<T>;
}

export function idempotent(action: ActionSettings, options: NextIdempotencyOptions): NextIdempotentAction {
  return {
    route: (handler) => withRoute(action, options, handler),
    pages: (handler) => withPages(action, options, handler),
    action: (fn) => withAction(action, options, fn),
  };
}

/**
 * The same wrappers by action name, as `createIdempotency()` returns them:
 * `withIdempotency('createPayment', handler)`, `withPagesIdempotency(...)`, `idempotentAction('createPayment', fn)`.
 */
export function nextWrappers<N extends string>(
  options: NextIdempotencyOptions,
  actions: Readonly<Record<N, ActionSettings>>,
) {
  return {
    withIdempotency: <R extends Request, C>(name: N, handler: RouteHandler<R, C>) =>
      withRoute(actions[name], options, handler),
    withPagesIdempotency: <Q extends PagesApiRequest, S extends ServerResponse>(
      name: N,
      handler: PagesHandler<Q, S>,
    ) => withPages(actions[name], options, handler),
    idempotentAction: <A extends unknown[], T>(name: N, fn: (key: string, ...args: A) => Promise<T>) =>
      withAction(actions[name], options, fn),
  };
}

function withRoute<R extends Request, C>(
  action: ActionSettings,
  options: NextIdempotencyOptions,
  handler: RouteHandler<R, C>,
) {
  const { core } = options;
  const policy = core.policy;
  return async (request: R, context: C): Promise<Response> => {
    if (!methodMatches(action, request.method)) return handler(request, context);
    const url = new URL(request.url);
    const identified = await identify(action, options, request, undefined, {
      method: request.method,
      keyHeader: request.headers.get(policy.keyHeader) ?? undefined,
      // Next 15 passes params as a Promise, Next 13/14 as an object: awaiting covers both.
      params: await (context as { params?: unknown } | undefined)?.params,
      body: await requestBody(request),
      query: Object.fromEntries(url.searchParams),
    });
    if (identified.kind === 'pass') return handler(request, context);
    if (identified.kind === 'refuse') return problemResponse(identified.problem);
    const decision = await begin(core, action, identified.request);
    if (decision.kind !== 'execute')
      return decision.kind === 'answer'
        ? problemResponse(decision.problem)
        : replayResponse(decision.response, policy.replayHeader);
    const { claim } = decision;
    return underClaim(request, claim.context, async (cell) => {
      let response: Response;
      try {
        response = await running.run(cell, () => handler(request, context));
      } catch (error) {
        await claim.release();
        throw error;
      }
      return settleResponse(claim, response, policy);
    });
  };
}

function withPages<Q extends PagesApiRequest, S extends ServerResponse>(
  action: ActionSettings,
  options: NextIdempotencyOptions,
  handler: PagesHandler<Q, S>,
) {
  const { core } = options;
  const policy = core.policy;
  return async (req: Q, res: S): Promise<void> => {
    if (!methodMatches(action, req.method ?? 'GET')) return void (await handler(req, res));
    const name = policy.keyHeader.toLowerCase();
    const identified = await identify(action, options, req, res, {
      method: req.method ?? 'GET',
      keyHeader: req.headersDistinct?.[name] ?? req.headers[name],
      // Pages routes merge dynamic segments into req.query; the route template names which ones are params.
      params: routeParams(action.route, req.query),
      body: req.body,
      query: req.query,
    });
    if (identified.kind === 'pass') return void (await handler(req, res));
    if (identified.kind === 'refuse') return sendProblem(res, identified.problem);
    const decision = await begin(core, action, identified.request);
    if (decision.kind !== 'execute')
      return decision.kind === 'answer'
        ? sendProblem(res, decision.problem)
        : sendReplay(res, decision.response, policy.replayHeader);
    const { claim } = decision;
    await underClaim(req, claim.context, async (cell) => {
      const settled = holdResponse(res, claim, policy);
      try {
        await running.run(cell, () => handler(req, res));
      } catch (error) {
        if (!settled.ended()) {
          await claim.release();
          throw error;
        }
      }
      // Next treats the route as done when this resolves: it resolves once the answer is recorded and sent.
      await settled.done;
    });
  };
}

function withAction<A extends unknown[], T>(
  action: ActionSettings,
  options: NextIdempotencyOptions,
  fn: (key: string, ...args: A) => Promise<T>,
) {
  const { core } = options;
  const policy = core.policy;
  return async (key: string, ...args: A): Promise<T> => {
    const principal = action.scope === 'global' ? 'global' : await options.principal(undefined, action.scope);
    const scope = principal === undefined ? '' : String(principal);
    // Log-only rollout: a call enforcement would refuse runs anyway, unrecorded (the core counts it).
    const refused = (error: Error) => {
      if (action.rollout !== 'log-only') throw error;
      return refusedRequest(scope);
    };
    const parsed = parseIdempotencyKey(
      typeof key === 'string' ? key : undefined,
      policy.maxKeyLength,
      policy.keyPattern,
    );
    const fingerprint = computeFingerprint({
      method: action.method ?? 'POST',
      route: action.route,
      fields: pickFields(action.significantFields, { body: actionInput(args) }),
    });
    const request: IdempotentRequest =
      scope === ''
        ? refused(new PrincipalMissingError())
        : parsed.ok === false
          ? refused(new InvalidKeyError())
          : { scope, key: parsed.key, fingerprint };
    const cell: ClaimCell = {};
    try {
      const { result } = await core.runOnce(action, request, (_signal, context) => {
        cell.context = context;
        return running.run(cell, async (): Promise<T | Navigation> => {
          try {
            // The action gets the key it was called with, even one log-only mode let through unparsed.
            return jsonRoundTrip(await fn(parsed.ok === false ? key : parsed.key, ...args));
          } catch (error) {
            // redirect() ends an action by throwing: its target is the action's answer, recorded like a result.
            const digest = redirectDigest(error);
            if (digest === undefined) throw error;
            return { [NAVIGATION]: digest };
          }
        });
      });
      if (isNavigation(result)) throw navigationError(result[NAVIGATION]);
      return result;
    } finally {
      // runOnce has completed or released the claim: what the action left running keeps the cell, not the claim.
      delete cell.context;
    }
  };
}

/** The route template's parameters (`:id` or `[id]`) out of a Pages route's req.query. */
function routeParams(route: string, query: PagesApiRequest['query']): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const segment of route.split('/')) {
    const name = segment.startsWith(':') ? segment.slice(1) : /^\[(?:\.\.\.)?([^\]]+)\]$/.exec(segment)?.[1];
    if (name && query?.[name] !== undefined) params[name] = query[name];
  }
  return params;
}

/**
 * What the action was given after the key. A form's Server Action gets FormData (`<form action={save.bind(null,
 * key)}>`), after the previous state under useActionState (`(key, prevState, formData)`): its fields are read like
 * a JSON body's (the last value of a repeated field wins), so a changed form under the same key is a mismatch.
 * Otherwise the first argument is the input.
 */
function actionInput(args: readonly unknown[]): unknown {
  const form = args.find((arg) => arg instanceof FormData || arg instanceof URLSearchParams) as
    FormData | URLSearchParams | undefined;
  if (form === undefined) return args[0];
  const fields: Record<string, unknown> = {};
  form.forEach((value, name) => (fields[name] = typeof value === 'string' ? value : value.name));
  return fields;
}

/** The recorded answer of an action that ended in redirect(): the digest Next.js reads the target from. */
const NAVIGATION = '__idempotencyRedirect';
type Navigation = { readonly [NAVIGATION]: string };

/** next/navigation's redirect() and permanentRedirect() throw an error whose digest starts with NEXT_REDIRECT. */
function redirectDigest(error: unknown): string | undefined {
  const digest = (error as { digest?: unknown } | null)?.digest;
  return typeof digest === 'string' && digest.startsWith('NEXT_REDIRECT;') ? digest : undefined;
}

function isNavigation(value: unknown): value is Navigation {
  return typeof value === 'object' && value !== null && typeof (value as Navigation)[NAVIGATION] === 'string';
}

/** The same redirect again, for a repeat: Next.js sends the client where the first call sent it. */
function navigationError(digest: string): Error {
  return Object.assign(new Error('NEXT_REDIRECT'), { digest });
}

/** The first call returns what every repeat will: the JSON form of the result (Dates become strings, and so on). */
function jsonRoundTrip<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

async function identify(
  action: ActionSettings,
  options: NextIdempotencyOptions,
  request: Request | PagesApiRequest,
  response: ServerResponse | undefined,
  parts: Omit<HttpRequestParts, 'principal'>,
) {
  const principal =
    action.scope === 'global' ? 'global' : await options.principal(request, action.scope, response);
  return identifyRequest(action, options.core.policy, { ...parts, principal: () => principal });
}

type Begun =
  | { readonly kind: 'execute'; readonly claim: Claim }
  | { readonly kind: 'replay'; readonly response: StoredResponse }
  | { readonly kind: 'answer'; readonly problem: Problem };

async function begin(
  core: IdempotencyCore,
  action: ActionSettings,
  request: IdempotentRequest,
): Promise<Begun> {
  const policy = core.policy;
  let decision: Decision;
  try {
    decision = await core.begin(action, request);
  } catch (error) {
    if (error instanceof StoreUnavailableError)
      return { kind: 'answer', problem: problemFor('store-unavailable', policy) };
    throw error;
  }
  switch (decision.kind) {
    case 'execute':
    case 'replay':
      return decision;
    case 'mismatch':
      return { kind: 'answer', problem: problemFor('key-mismatch', policy) };
    case 'not-replayable':
      return { kind: 'answer', problem: problemFor('response-not-replayable', policy) };
    case 'in-flight':
      return { kind: 'answer', problem: problemFor('in-flight', policy, decision.retryAfterSeconds) };
  }
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

function problemBody(problem: Problem): string {
  return JSON.stringify({
    type: problem.type,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
  });
}

function problemResponse(problem: Problem): Response {
  const headers = new Headers({ 'content-type': 'application/problem+json' });
  if (problem.retryAfterSeconds !== undefined) headers.set('retry-after', String(problem.retryAfterSeconds));
  return new Response(problemBody(problem), { status: problem.status, headers });
}

type Chunk = string | Uint8Array;
type Callback = (error?: Error | null) => void;

/**
 * Pages API: buffers everything the handler writes (res.status().json(), res.send(), res.end()), records it or
 * releases the claim, and only then lets it reach the socket; writeHead is deferred too.
 */
function holdResponse(
  res: ServerResponse,
  claim: Claim,
  policy: IdempotencyPolicy,
): { done: Promise<void>; ended(): boolean } {
  const chunks: Buffer[] = [];
  const original = { writeHead: res.writeHead, write: res.write, end: res.end };
  const toBuffer = (chunk: Chunk, encoding?: BufferEncoding) =>
    typeof chunk === 'string'
      ? Buffer.from(chunk, encoding ?? 'utf8')
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  let ended = false;
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));

  res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    res.statusCode = status;
    if (typeof rest[0] === 'string') res.statusMessage = rest[0];
    const headers = rest.find((item) => typeof item === 'object' && item !== null);
    if (Array.isArray(headers)) {
      for (let i = 0; i + 1 < headers.length; i += 2)
        res.setHeader(String(headers[i]), headers[i + 1] as string);
    } else if (headers) {
      for (const [name, value] of Object.entries(headers))
        if (value !== undefined) res.setHeader(name, value as string);
    }
    return this;
  } as ServerResponse['writeHead'];

  res.write = function (chunk: Chunk, encodingOrCallback?: BufferEncoding | Callback, callback?: Callback) {
    chunks.push(toBuffer(chunk, typeof encodingOrCallback === 'string' ? encodingOrCallback : undefined));
    const callbackFn = typeof encodingOrCallback === 'function' ? encodingOrCallback : callback;
    if (callbackFn) queueMicrotask(() => callbackFn());
    return true;
  } as ServerResponse['write'];

  res.end = function (
    this: ServerResponse,
    chunk?: Chunk | Callback,
    encodingOrCallback?: BufferEncoding | Callback,
    callback?: Callback,
  ) {
    if (ended) return this;
    ended = true;
    if (chunk !== undefined && typeof chunk !== 'function')
      chunks.push(toBuffer(chunk, typeof encodingOrCallback === 'string' ? encodingOrCallback : undefined));
    const callbackFn = [chunk, encodingOrCallback, callback].find(
      (item): item is Callback => typeof item === 'function',
    );
    res.writeHead = original.writeHead;
    res.write = original.write;
    res.end = original.end;
    void settleNode(res, claim, Buffer.concat(chunks), policy)
      .then(() => callbackFn?.())
      .finally(finish);
    return this;
  } as ServerResponse['end'];

  return { done, ended: () => ended };
}

async function settleNode(
  res: ServerResponse,
  claim: Claim,
  body: Buffer,
  policy: IdempotencyPolicy,
): Promise<void> {
  const status = res.statusCode;
  if (!isStorable(status)) {
    await claim.release();
    res.end(body);
    return;
  }
  const headers: Record<string, string> = {};
  for (const name of policy.replayedHeaders) {
    const value = res.getHeader(name);
    if (value !== undefined)
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  try {
    await claim.complete({ status, headers, body });
  } catch (error) {
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    return sendProblem(res, failureProblem(error, policy));
  }
  res.end(body);
}

function sendReplay(res: ServerResponse, response: StoredResponse, replayHeader: string): void {
  res.statusCode = response.status;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  res.setHeader(replayHeader, 'true');
  res.setHeader('content-length', String(response.body.length));
  res.end(response.body);
}

function sendProblem(res: ServerResponse, problem: Problem): void {
  const body = Buffer.from(problemBody(problem), 'utf8');
  res.statusCode = problem.status;
  res.setHeader('content-type', 'application/problem+json');
  res.setHeader('content-length', String(body.length));
  if (problem.retryAfterSeconds !== undefined)
    res.setHeader('retry-after', String(problem.retryAfterSeconds));
  res.end(body);
}
