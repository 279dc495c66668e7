import { AsyncLocalStorage } from 'node:async_hooks';
import * as nest from '@nestjs/common';
import {
  HttpException,
  SetMetadata,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  type Provider,
} from '@nestjs/common';
import { APP_INTERCEPTOR, Reflector } from '@nestjs/core';
import { from, type Observable } from 'rxjs';
import { isStorable, type Claim, type Decision, type IdempotencyCore } from './core.js';
import { identifyRequest, methodMatches } from './identify.js';
import { failureProblem, problemFor, type Problem } from './problems.js';
import {
  StoreUnavailableError,
  type ActionSettings,
  type IdempotencyContext,
  type Scope,
  type StoredResponse,
} from './types.js';

export type { IdempotencyContext } from './types.js';

/**
 * The request as your guards leave it, on Nest's Express platform (express.Request) and its Fastify platform
 * (FastifyRequest) alike: what the interceptor reads. `request.user` is whatever your auth guard attached.
 */
export interface AuthenticatedRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Every value of a repeated header (Node's IncomingMessage; FastifyRequest has only `headers`). */
  readonly headersDistinct?: Readonly<Record<string, string[] | undefined>>;
  readonly params?: unknown;
  readonly body?: unknown;
  readonly query?: unknown;
  readonly user?: { readonly id?: string | number };
}

/**
 * What the interceptor uses of the response. express.Response and FastifyReply share all of it except how a header
 * is set (setHeader / header) and the Express app settings res.json() and res.send() apply.
 */
interface PlatformResponse {
  readonly statusCode: number;
  status(code: number): unknown;
  getHeader(name: string): unknown;
  getHeaders(): Record<string, unknown>;
  removeHeader(name: string): unknown;
  setHeader?(name: string, value: string): unknown;
  header?(name: string, value: string): unknown;
  readonly app?: { get(setting: string): unknown };
}

export interface NestIdempotencyOptions {
  readonly core: IdempotencyCore;
  /**
   * Who owns keys for scoped actions (user, account or tenant id), usually from `request.user` set by your guard.
   * Return undefined when the request has no such principal; it is answered 401 and nothing is stored.
   */
  readonly principal: (
    request: AuthenticatedRequest,
    scope: Exclude<Scope, 'global'>,
  ) => string | number | undefined;
}

const IDEMPOTENT_ACTION = 'idempotency:action';

/** What the interceptor uses of Nest's StreamableFile (@nestjs/common 8+), read by shape so Nest 7 compiles too. */
interface StreamableLike {
  getStream(): AsyncIterable<unknown>;
  getHeaders(): { type?: string; disposition?: string; length?: number };
}

type StreamableFileClass = new (
  bytes: Uint8Array,
  options: { type?: string; disposition?: string; length?: number },
) => StreamableLike;

/**
 * Nest 8+ sends a StreamableFile's bytes as they are. @nestjs/common 7 has no such class: there the interceptor
 * answers with what its platform adapter sends unchanged (see toSent).
 */
const StreamableFile = Reflect.get(nest, 'StreamableFile') as StreamableFileClass | undefined;

/** The value an answer returns to Nest; Nest's platform adapter sends it. */
type Sent = StreamableLike | Buffer | string;

/**
 * Marks a route handler as one protected action: `@Post() @Idempotent(ACTIONS.submitOrder) submit(...)`, or a
 * @nestjs/graphql resolver method: `@Mutation(() => Order) @Idempotent(ACTIONS.submitOrder) submit(...)`.
 */
export const Idempotent = (action: ActionSettings) => SetMetadata(IDEMPOTENT_ACTION, action);

const held = new WeakMap<object, IdempotencyContext>();
/**
 * The claim a protected route runs under, for code that has no request (an injected service): every async
 * continuation the handler starts sees its own request's cell, which is emptied when the claim ends.
 */
const running = new AsyncLocalStorage<{ context?: IdempotencyContext }>();

/**
 * The running claim: of this request, in an idempotent route (`@Req() request`) or resolver (`@Context('req')`); with
 * no request, of the protected route whose handler the calling code runs for (a service it calls). Undefined outside
 * a protected route, and once its claim has ended.
 */
export function idempotencyOf(request?: object): IdempotencyContext | undefined {
  return (request && held.get(request)) ?? running.getStore()?.context;
}

/** Runs `work` (the handler and the recording of its answer) with the claim's context held for it, until it settles. */
async function underClaim<T>(
  request: object,
  context: IdempotencyContext,
  work: () => Promise<T>,
): Promise<T> {
  const cell: { context?: IdempotencyContext } = { context };
  held.set(request, context);
  try {
    return await running.run(cell, work);
  } finally {
    held.delete(request);
    // A timer or promise the handler left running keeps the cell, not the claim.
    delete cell.context;
  }
}

/**
 * The interceptor for one action. Nest runs guards first, so their 401/403/429 (a throttler included) never reach
 * it; pipes run inside next.handle(), after the claim. The handler's result is serialised the way Nest's Express
 * adapter will send it, recorded, and only then returned to Nest, so a client never sees an answer a retry could
 * contradict. Bind it outermost (idempotencyProviders registers it globally) so no other interceptor reshapes the
 * result after it was recorded.
 */
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    readonly action: ActionSettings,
    private readonly options: NestIdempotencyOptions,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const type = context.getType<string>();
    if (type === 'graphql') return from(this.resolve(context, next));
    if (type !== 'http') return next.handle();
    const http = context.switchToHttp();
    // Another method on the same handler passes straight through: no claim, no record.
    if (!methodMatches(this.action, http.getRequest<AuthenticatedRequest>().method)) return next.handle();
    return from(
      this.run(http.getRequest<AuthenticatedRequest>(), http.getResponse<PlatformResponse>(), next),
    );
  }

  private async run(
    request: AuthenticatedRequest,
    res: PlatformResponse,
    next: CallHandler,
  ): Promise<unknown> {
    const { action, options } = this;
    const { core } = options;
    const policy = core.policy;
    const name = policy.keyHeader.toLowerCase();
    const identified = identifyRequest(action, policy, {
      method: request.method,
      keyHeader: request.headersDistinct?.[name] ?? request.headers[name],
      params: request.params,
      body: request.body,
      query: request.query,
      principal: () => (action.scope === 'global' ? 'global' : options.principal(request, action.scope)),
    });
    if (identified.kind === 'pass') return lastValue(next.handle());
    if (identified.kind === 'refuse') return answerProblem(res, identified.problem);

    let decision: Decision;
    try {
      decision = await core.begin(action, identified.request);
    } catch (error) {
      if (error instanceof StoreUnavailableError)
        return answerProblem(res, problemFor('store-unavailable', policy));
      throw error;
    }
    switch (decision.kind) {
      case 'replay':
        return answer(res, decision.response, { [policy.replayHeader]: 'true' });
      case 'mismatch':
        return answerProblem(res, problemFor('key-mismatch', policy));
      case 'not-replayable':
        return answerProblem(res, problemFor('response-not-replayable', policy));
      case 'in-flight':
        return answerProblem(res, problemFor('in-flight', policy, decision.retryAfterSeconds));
      case 'execute': {
        const { claim } = decision;
        return underClaim(request, claim.context, () => this.execute(claim, res, next));
      }
    }
  }

  private async execute(claim: Claim, res: PlatformResponse, next: CallHandler): Promise<unknown> {
    // Nest set the route's status (201 for POST, 200, or @HttpCode) just before the interceptors; it sends that one.
    const status = res.statusCode;
    const outcome = await handled(claim, next);
    if ('error' in outcome) {
      // Answered exactly as Nest's default exception filter renders it.
      const { error } = outcome;
      const response = { status: error.getStatus(), ...jsonBytes(res, renderedException(error)) };
      const failed = await this.record(claim, res, response);
      return (
        failed ??
        answer(res, { ...response, headers: replayedHeaders(res, this.policy(), response.contentType) })
      );
    }
    const { value } = outcome;
    if (!isStorable(status)) {
      await claim.release();
      return value;
    }
    if (StreamableFile && isStreamable(value)) {
      const bytes = await streamBytes(value);
      const { type, disposition } = value.getHeaders();
      const contentType = contentTypeOf(res) ?? type;
      const failed = await this.record(claim, res, { status, body: bytes, contentType });
      return failed ?? new StreamableFile(bytes, { type: contentType, disposition, length: bytes.length });
    }
    const serialised = sentBytes(res, value);
    const failed = await this.record(claim, res, { status, ...serialised });
    // The value goes back to Nest, whose platform adapter turns it into the very bytes just recorded.
    return failed ?? value;
  }

  /** Records the response; undefined when it is durable, otherwise the problem answer that replaces it. */
  private async record(
    claim: Claim,
    res: PlatformResponse,
    response: { status: number; body: Buffer; contentType: string | undefined; etag?: string },
  ): Promise<Sent | undefined> {
    const headers = replayedHeaders(res, this.policy(), response.contentType, response.etag);
    try {
      await claim.complete({ status: response.status, headers, body: response.body });
      return undefined;
    } catch (error) {
      // Not recorded, so not sent: the client retries and gets either the recorded result or a fresh, fenced attempt.
      for (const name of Object.keys(res.getHeaders())) res.removeHeader(name);
      return answerProblem(res, failureProblem(error, this.policy()));
    }
  }

  /**
   * A GraphQL mutation marked @Idempotent: the same protocol, answered the GraphQL way. The key comes from the HTTP
   * request's header, the fingerprint from the mutation's own arguments (request.body holds the whole document).
   * Refusals and conflicts are thrown as HttpExceptions carrying the problem, which the GraphQL layer returns as an
   * error (Apollo: extensions.status and extensions.originalError); a replay returns the recorded result value.
   */
  private async resolve(context: ExecutionContext, next: CallHandler): Promise<unknown> {
    const { request, args } = graphqlCall(context);
    const { action, options } = this;
    const { core } = options;
    const policy = core.policy;
    const identified = identifyRequest(action, policy, {
      // One mutation is one action, whatever HTTP method carried the document.
      method: action.method ?? 'POST',
      keyHeader: keyHeaderOf(request, policy.keyHeader.toLowerCase()),
      params: undefined,
      body: args,
      query: undefined,
      principal: () => (action.scope === 'global' ? 'global' : options.principal(request, action.scope)),
    });
    if (identified.kind === 'pass') return lastValue(next.handle());
    if (identified.kind === 'refuse') throw problemException(identified.problem);

    let decision: Decision;
    try {
      decision = await core.begin(action, identified.request);
    } catch (error) {
      if (error instanceof StoreUnavailableError)
        throw problemException(problemFor('store-unavailable', policy));
      throw error;
    }
    switch (decision.kind) {
      case 'replay':
        return recordedResult(decision.response);
      case 'mismatch':
        throw problemException(problemFor('key-mismatch', policy));
      case 'not-replayable':
        throw problemException(problemFor('response-not-replayable', policy));
      case 'in-flight':
        throw problemException(problemFor('in-flight', policy, decision.retryAfterSeconds));
      case 'execute': {
        const { claim } = decision;
        return underClaim(request, claim.context, () => this.resolveOnce(claim, next));
      }
    }
  }

  /**
   * Runs the resolver and records its result as JSON (status 200, as core.runOnce records one) before returning it.
   * A definitive 4xx HttpException is the mutation's outcome: recorded with its status and thrown again on every
   * replay.
   */
  private async resolveOnce(claim: Claim, next: CallHandler): Promise<unknown> {
    const outcome = await handled(claim, next);
    if ('error' in outcome) {
      await this.recordResult(claim, outcome.error.getStatus(), renderedException(outcome.error));
      throw outcome.error;
    }
    const { value } = outcome;
    await this.recordResult(claim, 200, value ?? null);
    return value;
  }

  /** Records a resolver's outcome; when it is not durable the call fails with that problem instead. */
  private async recordResult(claim: Claim, status: number, value: unknown): Promise<void> {
    let body: Buffer;
    try {
      body = Buffer.from(JSON.stringify(value) ?? 'null', 'utf8');
    } catch (error) {
      // Not JSON (a BigInt, a cycle): nothing could be replayed, so the key is released and the error surfaces.
      await claim.release();
      throw error;
    }
    try {
      await claim.complete({ status, headers: { 'content-type': 'application/json' }, body });
    } catch (error) {
      throw problemException(failureProblem(error, this.policy()));
    }
  }

  private policy() {
    return this.options.core.policy;
  }
}

/** What the interceptor reads of a GraphQL context: the HTTP request, wherever the GraphQL driver puts it. */
interface GraphqlContext {
  /** Apollo (Express and Fastify) and Nest's default context, `{ req }`. */
  readonly req?: AuthenticatedRequest;
  /** Mercurius and GraphQL Yoga. */
  readonly request?: AuthenticatedRequest;
  readonly reply?: { readonly request?: AuthenticatedRequest };
}

/**
 * The request and the mutation's arguments of a resolver call, read by shape so the scaffold compiles without
 * @nestjs/graphql: its GqlExecutionContext reads the same `[root, args, context, info]`.
 */
function graphqlCall(context: ExecutionContext): { request: AuthenticatedRequest; args: unknown } {
  const [, args, ctx] = context.getArgs<[unknown, unknown, GraphqlContext | undefined]>();
  const request = ctx?.req ?? ctx?.request ?? ctx?.reply?.request;
  // A marked mutation never runs unprotected: a context without the request is a setup error.
  if (typeof request !== 'object' || request === null || typeof request.headers !== 'object')
    throw new Error(
      '@Idempotent on a GraphQL resolver needs the HTTP request in the GraphQL context (`req` or `request`)',
    );
  return { request, args };
}

/** Every value of the key header: Node's headersDistinct, the plain header, or a Fetch API Headers (Yoga). */
function keyHeaderOf(request: AuthenticatedRequest, name: string): string | readonly string[] | undefined {
  const headers = request.headers as AuthenticatedRequest['headers'] & { get?: unknown };
  if (typeof headers.get === 'function')
    return (headers.get as (name: string) => string | null)(name) ?? undefined;
  return request.headersDistinct?.[name] ?? headers[name];
}

/** An HttpException's body as Nest renders it: its object, or `{ statusCode, message }` for a string. */
function renderedException(error: HttpException): object {
  const thrown = error.getResponse();
  return typeof thrown === 'object' && thrown !== null
    ? thrown
    : { statusCode: error.getStatus(), message: thrown };
}

/** A resolver's recorded outcome: its JSON result, or its 4xx HttpException thrown again. */
function recordedResult(response: StoredResponse): unknown {
  const text = response.body.toString('utf8');
  const value = text === '' ? null : (JSON.parse(text) as unknown);
  if (response.status >= 400) {
    const body =
      typeof value === 'object' && value !== null ? value : { statusCode: response.status, message: value };
    throw new HttpException(body, response.status);
  }
  return value;
}

/**
 * A problem as a GraphQL error: an HttpException whose body is the problem plus the `statusCode` and `message`
 * Nest's GraphQL drivers read (Apollo puts the body in extensions.originalError and the status in extensions).
 */
function problemException(problem: Problem): HttpException {
  const { type, title, status, detail, retryAfterSeconds } = problem;
  const retry = retryAfterSeconds === undefined ? {} : { retryAfterSeconds };
  return new HttpException(
    { statusCode: status, message: title, type, title, status, detail, ...retry },
    status,
  );
}

/** One interceptor per action, as createIdempotency() builds them (`idempotency.submitOrder`). */
export function idempotent(action: ActionSettings, options: NestIdempotencyOptions): IdempotencyInterceptor {
  return new IdempotencyInterceptor(action, options);
}

/**
 * Providers for your AppModule: one global interceptor that sends each route marked `@Idempotent(ACTIONS.name)`
 * through that action's interceptor from createIdempotency(). Unmarked routes pass straight through.
 */
export function idempotencyProviders(idempotency: object): Provider[] {
  const routes = new Map<string, IdempotencyInterceptor>();
  for (const value of Object.values(idempotency))
    if (value instanceof IdempotencyInterceptor) routes.set(value.action.codeName, value);
  return [
    {
      provide: APP_INTERCEPTOR,
      inject: [Reflector],
      useFactory: (reflector: Reflector): NestInterceptor => ({
        intercept(context, next) {
          const marked = reflector.get<ActionSettings | undefined>(IDEMPOTENT_ACTION, context.getHandler());
          if (!marked) return next.handle();
          const route = routes.get(marked.codeName);
          if (!route)
            throw new Error(`@Idempotent(${marked.codeName}): createIdempotency() has no such HTTP action`);
          return route.intercept(context, next);
        },
      }),
    },
  ];
}

function contentTypeOf(res: PlatformResponse): string | undefined {
  const value = res.getHeader('content-type');
  return value === undefined ? undefined : String(value);
}

/** Express sets a header with setHeader; a FastifyReply has only header(). */
function setHeader(res: PlatformResponse, name: string, value: string): void {
  if (res.setHeader) res.setHeader(name, value);
  else res.header?.(name, value);
}

/**
 * What Nest's platform adapter sends for a handler's value. Express: nothing, res.json(object) or
 * res.send(String(value)) as text/html. Fastify: reply.send(value), a string as text/plain, anything else as JSON.
 */
function sentBytes(
  res: PlatformResponse,
  value: unknown,
): { body: Buffer; contentType: string | undefined; etag?: string } {
  if (!res.setHeader) {
    if (value === undefined) return { body: Buffer.alloc(0), contentType: contentTypeOf(res) };
    return typeof value === 'string' ? textBytes(res, value, 'text/plain') : jsonBytes(res, value);
  }
  if (value === undefined || value === null)
    return { body: Buffer.alloc(0), contentType: contentTypeOf(res) };
  const serialised =
    typeof value === 'object' ? jsonBytes(res, value) : textBytes(res, String(value), 'text/html');
  // res.send() adds the app's ETag to a body it sends; it is computed from the same bytes, so record it too.
  const etagFn = res.app?.get('etag fn') as ((body: Buffer, encoding?: string) => string) | undefined;
  const etag = res.getHeader('etag') === undefined && etagFn ? etagFn(serialised.body) : undefined;
  return etag === undefined ? serialised : { ...serialised, etag };
}

/** res.json(): the app's json replacer, spaces and escape settings, Content-Type application/json; charset=utf-8. */
function jsonBytes(res: PlatformResponse, value: unknown): { body: Buffer; contentType: string } {
  const replacer = res.app?.get('json replacer') as ((key: string, value: unknown) => unknown) | undefined;
  const spaces = res.app?.get('json spaces') as string | number | undefined;
  let json = JSON.stringify(value, replacer, spaces) ?? '';
  if (res.app?.get('json escape'))
    json = json.replace(/[<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return {
    body: Buffer.from(json, 'utf8'),
    contentType: withCharset(contentTypeOf(res) ?? 'application/json'),
  };
}

function textBytes(res: PlatformResponse, text: string, type: string): { body: Buffer; contentType: string } {
  return { body: Buffer.from(text, 'utf8'), contentType: withCharset(contentTypeOf(res) ?? type) };
}

function withCharset(type: string): string {
  return /;\s*charset=/i.test(type) ? type : `${type}; charset=utf-8`;
}

/**
 * rxjs 7's lastValueFrom(source, { defaultValue: undefined }), over subscribe: rxjs 6 (Nest 7) has no lastValueFrom,
 * and its toPromise() is deprecated in 7.
 */
function lastValue<T>(source: Observable<T>): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    let last: T | undefined;
    source.subscribe({
      next: (value) => (last = value),
      error: reject,
      complete: () => resolve(last),
    });
  });
}

/**
 * Runs the handler under the claim. A definitive 4xx HttpException (402, 409, 422 from the app) is the action's
 * outcome, to record; 5xx, other errors and 401/403/429 release the key and are thrown on.
 */
async function handled(
  claim: Claim,
  next: CallHandler,
): Promise<{ value: unknown } | { error: HttpException }> {
  try {
    return { value: await lastValue(next.handle()) };
  } catch (error) {
    if (error instanceof HttpException && isStorable(error.getStatus())) return { error };
    await claim.release();
    throw error;
  }
}

/** A StreamableFile from any copy of @nestjs/common (instanceof fails across two installed copies). */
function isStreamable(value: unknown): value is StreamableLike {
  const file = value as Partial<StreamableLike> | null;
  return (
    typeof file === 'object' &&
    file !== null &&
    typeof file.getStream === 'function' &&
    typeof file.getHeaders === 'function'
  );
}

async function streamBytes(file: StreamableLike): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of file.getStream())
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

function replayedHeaders(
  res: PlatformResponse,
  policy: NestIdempotencyOptions['core']['policy'],
  contentType: string | undefined,
  etag?: string,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of policy.replayedHeaders) {
    const lower = name.toLowerCase();
    const value =
      lower === 'content-type'
        ? contentType
        : lower === 'etag'
          ? (etag ?? res.getHeader(name))
          : res.getHeader(name);
    if (value !== undefined) headers[lower] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return headers;
}

/**
 * Answers with exact bytes and its own status. Nest's adapter re-applies the route's status (201/@HttpCode) to
 * whatever the chain returns, so that one call is absorbed; a StreamableFile is sent as is, without serialising.
 */
function answer(res: PlatformResponse, response: StoredResponse, extra: Record<string, string> = {}): Sent {
  res.status(response.status);
  for (const [name, value] of Object.entries({ ...response.headers, ...extra })) setHeader(res, name, value);
  res.status = function keepStatus(this: PlatformResponse) {
    Reflect.deleteProperty(res, 'status');
    return this;
  };
  return toSent(res, response.body);
}

/**
 * The bytes in a form the platform adapter sends unchanged: a StreamableFile (Nest 8+). Nest 7's Fastify adapter
 * sends a Buffer as it is; its Express adapter serialises any object as JSON, but a string goes out through res.send
 * as its UTF-8 bytes, which is every body Nest 7 can have recorded (a handler's JSON or text; it has no
 * StreamableFile). res.send keeps the Content-Type set above, adding charset=utf-8 where it names none.
 */
function toSent(res: PlatformResponse, body: Buffer): Sent {
  if (StreamableFile) return new StreamableFile(body, { length: body.length });
  return res.setHeader ? body.toString('utf8') : body;
}

function answerProblem(res: PlatformResponse, problem: Problem): Sent {
  const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
  if (problem.retryAfterSeconds !== undefined) headers['retry-after'] = String(problem.retryAfterSeconds);
  const body = Buffer.from(
    JSON.stringify({
      type: problem.type,
      title: problem.title,
      status: problem.status,
      detail: problem.detail,
    }),
    'utf8',
  );
  return answer(res, { status: problem.status, headers, body });
}
