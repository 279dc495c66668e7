import type { ActionDesign, DesignModel } from '../../model/types.js';
import type { CodeSample } from './ddl.js';

const q = (text: string) => JSON.stringify(text);

/** The lock-check-process-store flow as it reads in the user's framework. */
export function middlewareSample(model: DesignModel): CodeSample {
  const http = model.actions.filter((a) => a.trigger === 'http' || a.trigger === 'webhook');
  const other = model.actions.filter((a) => a.trigger === 'consumer' || a.trigger === 'cron');
  const parts = [core(model)];
  if (http.length > 0) parts.push(adapter(model, http));
  if (other.length > 0) parts.push(jobWrapper(model, other));
  return { language: 'typescript', code: parts.join('\n\n') };
}

function core(model: DesignModel): string {
  const { responses } = model;
  return `// Framework-agnostic core: claim → decide → execute → complete or release.
export type Decision =
  | { kind: 'execute'; fencingToken: number }
  | { kind: 'replay'; status: number; headers: Record<string, string>; body: Buffer }
  | { kind: 'in-flight'; retryAfterSeconds: number }
  | { kind: 'mismatch' };

export async function decide(store: IdempotencyStore, claim: Claim): Promise<Decision> {
  // One statement: inserts a new record, or takes over an expired lease with fencing_token + 1.
  const row = await store.claim(claim); // bounded by a ${model.detection.statementTimeoutMs} ms statement time-out
  if (row.claimed) return { kind: 'execute', fencingToken: row.fencingToken };
  if (!fingerprintsEqual(row.fingerprint, claim.fingerprint)) return { kind: 'mismatch' };
  if (row.status === 'COMPLETED') {
    return { kind: 'replay', status: row.responseStatus, headers: row.responseHeaders, body: row.responseBody };
  }
  return { kind: 'in-flight', retryAfterSeconds: Math.max(1, Math.ceil(row.leaseRemainingMs / 1000)) };
}

export function problem(status: number, type: string, title: string, detail: string) {
  return {
    status,
    headers: { 'content-type': 'application/problem+json' },
    body: JSON.stringify({ type: \`${responses.problemType}\${type}\`, title, status, detail }),
  };
}

export const MISMATCH_STATUS = ${responses.mismatchStatus};`;
}

function adapter(model: DesignModel, actions: ActionDesign[]): string {
  const first = actions[0]!;
  const options = (a: ActionDesign) =>
    `{ action: ${q(a.name)}, route: ${q(a.path ?? a.route ?? a.name)}, fields: ${JSON.stringify(a.significantFields)}, leaseMs: ${a.lockTimeoutMs}${a.heartbeatMs ? `, heartbeatMs: ${a.heartbeatMs}` : ''} }`;
  const registrations = actions
    .map((a) => {
      const method = (a.method ?? 'POST').toLowerCase();
      const path = a.path ?? '/';
      switch (model.stack.framework) {
        case 'fastify':
          return `app.${method === 'all' ? 'all' : method}(${q(path)}, { preHandler: idempotent(${options(a)}) }, ${a.codeName}Handler);`;
        case 'koa':
          return `router.${method === 'all' ? 'all' : method}(${q(path)}, idempotent(${options(a)}), ${a.codeName}Handler);`;
        case 'hono':
          return `app.on(${q(a.method ?? 'POST')}, ${q(path)}, idempotent(${options(a)}), ${a.codeName}Handler);`;
        case 'nestjs':
          return `// @Post(${q(path)}) @Idempotent(${options(a)}) ${a.codeName}(@Body() dto) { … }`;
        case 'nextjs':
          return `export const ${a.method ?? 'POST'} = withIdempotency(${options(a)}, ${a.codeName}Handler); // app${path}/route.ts`;
        default:
          return `app.${method === 'all' ? 'all' : method}(${q(path)}, idempotent(${options(a)}), ${a.codeName}Handler);`;
      }
    })
    .join('\n');
  const body = frameworkBody(model);
  return `${body}\n\n// Wiring for the protected ${first.trigger === 'webhook' ? 'webhooks and ' : ''}routes:\n${registrations}`;
}

function frameworkBody(model: DesignModel): string {
  const status = model.responses.mismatchStatus;
  const shared = `  const key = parseIdempotencyKey(KEY_HEADER_VALUE);
  if (!key.ok) return SEND(problem(400, 'invalid-idempotency-key', 'Invalid Idempotency-Key', key.reason));
  const claim = { scope: PRINCIPAL, key: key.value, action: opts.action, leaseMs: opts.leaseMs,
    fingerprint: computeFingerprint(METHOD, opts.route, opts.fields, BODY) };
  let decision: Decision;
  try {
    decision = await decide(store, claim);
  } catch {
    return SEND({ ...problem(503, 'store-unavailable', 'Try again shortly', 'The request was not processed.'), retryAfter: 1 });
  }
  if (decision.kind === 'mismatch') return SEND(problem(MISMATCH_STATUS, 'idempotency-key-mismatch', 'Idempotency-Key reused', 'This key was already used with different parameters.'));
  if (decision.kind === 'in-flight') return SEND({ ...problem(409, 'request-in-progress', 'Request in progress', 'Retry after the time given.'), retryAfter: decision.retryAfterSeconds });
  if (decision.kind === 'replay') return SEND({ ...decision, replayed: true });`;
  switch (model.stack.framework) {
    case 'fastify':
      return `// Fastify: preHandler claims; onSend persists the serialized payload before it is written.
export function idempotent(opts: ActionOptions) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
${indent(shared.replace(/KEY_HEADER_VALUE/g, "request.headers['idempotency-key']").replace(/PRINCIPAL/g, 'request.user.id').replace(/METHOD/g, 'request.method').replace(/BODY/g, 'request.body').replace(/SEND\(/g, 'sendDecision(reply, '), 2)}
    request.idempotency = { claim, fencingToken: decision.fencingToken };
  };
}
// app.addHook('onSend', async (request, reply, payload) => { await completeOrRelease(store, request.idempotency, reply.statusCode, reply.getHeaders(), payload); return payload; });
// Status ${status} is used for a reused key with a different body.`;
    case 'nestjs':
      return `// NestJS: an interceptor around the handler; the response is stored before it leaves.
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly store: IdempotencyStore, private readonly reflector: Reflector) {}
  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const opts = this.reflector.get<ActionOptions>(IDEMPOTENT, context.getHandler());
    if (!opts) return next.handle();
    const request = context.switchToHttp().getRequest();
    const response = context.switchToHttp().getResponse();
    const store = this.store;
${indent(shared.replace(/KEY_HEADER_VALUE/g, "request.headers['idempotency-key']").replace(/PRINCIPAL/g, 'request.user.id').replace(/METHOD/g, 'request.method').replace(/BODY/g, 'request.body').replace(/SEND\(/g, 'respondNow(response, '), 2)}
    // respondNow writes the answer through the platform response and returns an Observable, so the handler never runs.
    const fencingToken = decision.fencingToken;
    return next.handle().pipe(
      // Stored before Nest serialises the result, so a crash after this point replays instead of re-running.
      concatMap(async (result) => {
        await store.complete(claim, fencingToken, { status: response.statusCode, headers: allowListed(response.getHeaders()), body: Buffer.from(JSON.stringify(result)) });
        return result;
      }),
      catchError(async (error) => {
        await releaseOrStore(store, claim, fencingToken, error); // 5xx releases, a definitive 4xx is stored
        throw error;
      }),
    );
  }
}`;
    case 'koa':
    case 'hono':
      return `// ${model.stack.frameworkLabel}: middleware that claims, awaits next(), then stores before the response leaves.
export function idempotent(opts: ActionOptions) {
  return async (ctx: Context, next: Next) => {
${indent(shared.replace(/KEY_HEADER_VALUE/g, model.stack.framework === 'hono' ? "ctx.req.header('idempotency-key')" : "ctx.get('idempotency-key')").replace(/PRINCIPAL/g, 'ctx.state.user.id').replace(/METHOD/g, model.stack.framework === 'hono' ? 'ctx.req.method' : 'ctx.method').replace(/BODY/g, model.stack.framework === 'hono' ? 'await ctx.req.json()' : 'ctx.request.body').replace(/SEND\(/g, 'respond(ctx, '), 2)}
    try {
      await next();
    } catch (error) {
      await store.release(claim, decision.fencingToken);
      throw error;
    }
    await completeOrRelease(store, claim, decision.fencingToken, ctx);
  };
}`;
    case 'nextjs':
      return `// Next.js route handler wrapper: the handler's Response is buffered, stored, then returned.
export function withIdempotency(opts: ActionOptions, handler: (req: Request) => Promise<Response>) {
  return async (req: Request): Promise<Response> => {
    const body = await req.clone().json();
${indent(shared.replace(/KEY_HEADER_VALUE/g, "req.headers.get('idempotency-key')").replace(/PRINCIPAL/g, 'await principalOf(req)').replace(/METHOD/g, 'req.method').replace(/BODY/g, 'body').replace(/SEND\(/g, 'toResponse('), 2)}
    let response: Response;
    try {
      response = await handler(req);
    } catch (error) {
      await store.release(claim, decision.fencingToken);
      throw error;
    }
    return completeOrRelease(store, claim, decision.fencingToken, response);
  };
}`;
    default:
      return `// Express: claim, then capture the response and persist it before any byte is sent.
export function idempotent(opts: ActionOptions): RequestHandler {
  return async (req, res, next) => {
${indent(shared.replace(/KEY_HEADER_VALUE/g, "req.get('Idempotency-Key')").replace(/PRINCIPAL/g, 'principalOf(req)').replace(/METHOD/g, 'req.method').replace(/BODY/g, 'req.body').replace(/SEND\(/g, 'sendDecision(res, '), 2)}
    const fencingToken = decision.fencingToken;
    const send = res.send.bind(res);
    res.send = (body?: unknown) => {
      const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      // 5xx releases the claim so a retry runs again; anything else is stored first, then sent.
      const persist = res.statusCode >= 500
        ? store.release(claim, fencingToken)
        : store.complete(claim, fencingToken, { status: res.statusCode, headers: allowListed(res.getHeaders()), body: bytes });
      persist.then(() => send(bytes), () => res.status(503).set('Retry-After', '1').end());
      return res;
    };
    next();
  };
}`;
  }
}

function indent(text: string, by: number): string {
  const pad = ' '.repeat(by);
  return text
    .split('\n')
    .map((line) => (line === '' ? line : pad + line))
    .join('\n');
}

function jobWrapper(model: DesignModel, actions: ActionDesign[]): string {
  const lines = actions.map(
    (a) =>
      `// ${a.name}: key = ${a.key.format}\nexport const ${a.codeName}Once = runOnce({ action: ${q(a.name)}, leaseMs: ${a.lockTimeoutMs}${a.heartbeatMs ? `, heartbeatMs: ${a.heartbeatMs}` : ''}, keyFrom: ${JSON.stringify(a.key.from ?? a.significantFields)} }, ${a.codeName});`,
  );
  return `// Consumers and jobs: the same claim, with the key derived from the message or the schedule slot.
// ${model.stack.brokerLabel === 'no message broker' ? 'Call it from the job runner.' : `Acknowledge the ${model.stack.brokerLabel} message only after runOnce resolves.`}
export function runOnce<T>(opts: JobOptions, work: (input: T) => Promise<unknown>) {
  return async (input: T): Promise<'done' | 'duplicate' | 'in-flight'> => {
    const claim = { scope: 'global', key: deriveKey(opts.action, opts.keyFrom, input), action: opts.action, leaseMs: opts.leaseMs,
      fingerprint: computeFingerprint('JOB', opts.action, opts.keyFrom, input) };
    const decision = await decide(store, claim);
    if (decision.kind !== 'execute') return decision.kind === 'replay' ? 'duplicate' : 'in-flight';
    const heartbeat = opts.heartbeatMs ? setInterval(() => void store.extend(claim, decision.fencingToken), opts.heartbeatMs) : undefined;
    try {
      await work(input);
      await store.complete(claim, decision.fencingToken, { status: 200, headers: {}, body: Buffer.alloc(0) });
      return 'done';
    } catch (error) {
      await store.release(claim, decision.fencingToken);
      throw error; // the broker redelivers; the next attempt claims again
    } finally {
      if (heartbeat) clearInterval(heartbeat);
    }
  };
}

${lines.join('\n')}`;
}
