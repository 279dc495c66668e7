import type {
  FastifyReply,
  FastifyRequest,
  onSendAsyncHookHandler,
  preHandlerAsyncHookHandler,
} from 'fastify';
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

export interface FastifyIdempotencyOptions {
  readonly core: IdempotencyCore;
  /**
   * Who owns keys for scoped actions (user, account or tenant id), typically set by your auth hook.
   * Return undefined when the request has no such principal; it is answered 401 and nothing is stored.
   */
  readonly principal: (
    request: FastifyRequest,
    scope: Exclude<Scope, 'global'>,
  ) => string | number | undefined;
}

/**
 * What every route's request and reply have, whatever the route's generics. The hooks are typed against these, not
 * Fastify's hook types: those name the route's generics, so spread into a route they took part in inferring them,
 * pinning a handler that types its request (`FastifyRequest<{ Body: … }>`) or giving a type provider's schema
 * (TypeBox, Zod) a second candidate that left request.params unknown. Fastify calls them with the real request.
 */
type AnyRouteRequest = Pick<FastifyRequest, 'id' | 'method' | 'url'>;
type AnyRouteReply = Pick<FastifyReply, 'statusCode'>;

/** Route-level hooks for one action: pass as the route options, `app.post(url, idempotency.name, handler)`. */
export interface IdempotentRoute {
  readonly preHandler: (request: AnyRouteRequest, reply: AnyRouteReply) => Promise<unknown>;
  readonly onSend: (request: AnyRouteRequest, reply: AnyRouteReply, payload: unknown) => Promise<unknown>;
}

// Per request, not a decoration: nothing to register on the instance, and it is gone with the request.
const held = new WeakMap<FastifyRequest, { readonly claim: Claim; readonly context: IdempotencyContext }>();

/**
 * The running claim of this request, inside the handler of an idempotent route: scope, key, fencing token, attempt,
 * lease signal and (transactional mode) the transaction's `db`. The same shape in every adapter.
 */
export function idempotencyOf(request: FastifyRequest): IdempotencyContext | undefined {
  return held.get(request)?.context;
}

/**
 * Fastify hooks for one action. preHandler runs after authentication (onRequest), body parsing and validation,
 * so none of their refusals is ever stored; it claims the key or answers at once (replay, 400, 409, 422, 503).
 * onSend receives the serialized payload before anything is written to the socket and awaits the record, so a
 * client never sees an answer that a retry could contradict. reply.hijack() bypasses onSend: do not use it here.
 */
export function idempotent(action: ActionSettings, options: FastifyIdempotencyOptions): IdempotentRoute {
  const { core } = options;
  const policy = core.policy;

  const preHandler: preHandlerAsyncHookHandler = async (request, reply) => {
    const name = policy.keyHeader.toLowerCase();
    const identified = identifyRequest(action, policy, {
      method: request.method,
      keyHeader: distinctHeaders(request.raw)?.[name] ?? request.headers[name],
      params: request.params,
      body: request.body,
      query: request.query,
      principal: () => (action.scope === 'global' ? 'global' : options.principal(request, action.scope)),
    });
    if (identified.kind === 'pass') return undefined;
    if (identified.kind === 'refuse') return sendProblem(reply, identified.problem);

    let decision: Decision;
    try {
      decision = await core.begin(action, identified.request);
    } catch (error) {
      if (error instanceof StoreUnavailableError)
        return sendProblem(reply, problemFor('store-unavailable', policy));
      throw error;
    }
    switch (decision.kind) {
      case 'replay':
        return sendReplay(reply, decision.response, policy.replayHeader);
      case 'mismatch':
        return sendProblem(reply, problemFor('key-mismatch', policy));
      case 'not-replayable':
        return sendProblem(reply, problemFor('response-not-replayable', policy));
      case 'in-flight':
        return sendProblem(reply, problemFor('in-flight', policy, decision.retryAfterSeconds));
      case 'execute': {
        const { claim } = decision;
        held.set(request, { claim, context: claim.context });
        return undefined;
      }
    }
  };

  const onSend: onSendAsyncHookHandler<unknown> = async (request, reply, payload) => {
    const entry = held.get(request);
    // Replays and refusals from preHandler pass through untouched; so does a second send after a failure below.
    if (!entry) return payload;
    held.delete(request);
    const { claim } = entry;
    let body: Buffer;
    try {
      body = await payloadBytes(reply, payload);
    } catch (error) {
      await claim.release();
      throw error;
    }
    if (!isStorable(reply.statusCode)) {
      // 5xx (the handler threw or failed) and caller-state statuses: give the key back so a retry runs again.
      await claim.release();
      return body;
    }
    const headers: Record<string, string> = {};
    // content-encoding travels with the bytes when a compression hook ran first: they cannot be read without it.
    for (const name of [...policy.replayedHeaders, 'content-encoding']) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
    }
    try {
      await claim.complete({ status: reply.statusCode, headers, body });
    } catch (error) {
      // Not recorded, so not sent: the client retries and gets either the recorded result or a fresh, fenced attempt.
      for (const name of Object.keys(reply.getHeaders())) reply.removeHeader(name);
      return problemPayload(reply, failureProblem(error, policy));
    }
    return body;
  };

  // Fastify hands every hook the route's real request and reply, which is what these read.
  return {
    preHandler: preHandler as IdempotentRoute['preHandler'],
    onSend: onSend as IdempotentRoute['onSend'],
  };
}

/** onSend sees strings and Buffers (serialized JSON), streams, or a fetch Response: all become the exact bytes. */
async function payloadBytes(reply: FastifyReply, payload: unknown): Promise<Buffer> {
  if (payload === undefined || payload === null) return Buffer.alloc(0);
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  if (Buffer.isBuffer(payload)) return payload;
  if (payload instanceof Response) {
    reply.code(payload.status);
    payload.headers.forEach((value, name) => void reply.header(name, value));
    return Buffer.from(await payload.arrayBuffer());
  }
  if (isAsyncIterable(payload)) {
    const chunks: Buffer[] = [];
    for await (const chunk of payload)
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  }
  throw new TypeError(`idempotent route: cannot record a ${typeof payload} payload`);
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

function sendReplay(reply: FastifyReply, response: StoredResponse, replayHeader: string): FastifyReply {
  reply.code(response.status);
  for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
  reply.header(replayHeader, 'true');
  // A Buffer is sent as is: no serializer, no charset added, so the bytes match the first answer exactly.
  return reply.send(response.body);
}

function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply.send(problemPayload(reply, problem));
}

function problemPayload(reply: FastifyReply, problem: Problem): Buffer {
  reply.code(problem.status);
  reply.header('content-type', 'application/problem+json');
  if (problem.retryAfterSeconds !== undefined) reply.header('retry-after', String(problem.retryAfterSeconds));
  return Buffer.from(
    JSON.stringify({
      type: problem.type,
      title: problem.title,
      status: problem.status,
      detail: problem.detail,
    }),
    'utf8',
  );
}
