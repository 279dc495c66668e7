import { describe, expect, it } from 'vitest';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import type { WiringTarget } from '../../src/apply/types.js';

const file = 'src/controllers/OrderController.ts';
const options = (routingControllers: WireSourceOptions['routingControllers'] = { header: 'Idempotency-Key', currentUserChecker: false }): WireSourceOptions => ({
  framework: 'express',
  scaffoldDir: 'src/idempotency',
  imports: { aliases: [], defaultExtension: '.js' },
  scaffoldModules: new Set(['index', 'instance']),
  ...(routingControllers ? { routingControllers } : {}),
});
const target = (line: number, extra: Partial<WiringTarget> = {}): WiringTarget => ({ action: 'createOrder', codeName: 'createOrder', trigger: 'http', method: 'POST', path: '/orders', file, line, scope: 'user', keySource: 'client', ...extra });

/** A controller whose `create` method (decorators from line 6) is the action. */
const controller = (signature: string, body = "    return { id: 1, sku: body.sku };", imports = 'Body, CurrentUser, JsonController, Post') => `import { ${imports} } from 'routing-controllers';
import type { User } from '../auth.js';

@JsonController('/orders')
export class OrderController {
  @Post('/')
  ${signature} {
${body}
  }
}
`;

/** Applying to its own output changes nothing, as the CLI runs it again (the recorded line now one below). */
function expectIdempotent(text: string, targets: WiringTarget[], opts: WireSourceOptions): void {
  for (const anyLine of [true, false]) {
    const again = wireSource(file, text, targets, { ...opts, anyLine });
    expect([again.text, again.edits, again.stale]).toEqual([text, [], []]);
  }
}

describe('routing-controllers methods: the key is claimed inside the method', () => {
  it('takes the key with an added @HeaderParam, the caller from @CurrentUser(), and runs the body once per key', () => {
    const source = controller('async create(@Body() body: { sku: string }, @CurrentUser() user: User)');
    const out = wireSource(file, source, [target(6)], options());
    expect(out.stale).toEqual([]);
    expect(out.text).toBe(`import { Body, CurrentUser, HeaderParam, JsonController, Post, Res } from 'routing-controllers';
import type { User } from '../auth.js';
import { runOnceInController } from '../idempotency/controllerClaim.js';

@JsonController('/orders')
export class OrderController {
  @Post('/')
  async create(@Body() body: { sku: string }, @CurrentUser() user: User, @HeaderParam('Idempotency-Key', { type: String }) idempotencyKey: string | undefined, @Res() response: unknown) {
    return runOnceInController('createOrder', { caller: user, key: idempotencyKey, body, response }, async () => {
      return { id: 1, sku: body.sku };
    });
  }
}
`);
    expect(out.edits.map((e) => e.summary)).toEqual(["runs create inside runOnceInController('createOrder', …), keyed by the Idempotency-Key header (@HeaderParam), scoped to @CurrentUser(), its @Body() fingerprinted, replay and Retry-After headers set on @Res()"]);
    expect(out.manual.map((m) => m.reason)).toEqual([expect.stringContaining('callers must now send an Idempotency-Key header')]);
    expectIdempotent(out.text, [target(6)], options());
  });

  it("reuses a @HeaderParam for the config's header (any case), and passes route and query parameters on for the fingerprint", () => {
    const source = controller("async create(@Param('id') shopId: number, @QueryParam('dryRun') dryRun: boolean, @Body() body: { sku: string }, @CurrentUser() user: User, @HeaderParam('x-request-key') key?: string)", undefined, 'Body, CurrentUser, HeaderParam, JsonController, Param, Post, QueryParam');
    const out = wireSource(file, source, [target(6)], options({ header: 'X-Request-Key', currentUserChecker: false }));
    // After an optional parameter the added @Res() is optional too.
    expect(out.text).toContain("@HeaderParam('x-request-key') key?: string, @Res() response?: unknown) {\n    return runOnceInController('createOrder', { caller: user, key, body, params: { id: shopId }, query: { dryRun }, response }, async () => {");
    expect(out.text.match(/HeaderParam\(/g)).toHaveLength(1);
    expectIdempotent(out.text, [target(6)], options({ header: 'X-Request-Key', currentUserChecker: false }));
  });

  it('adds @CurrentUser() when the project configures a currentUserChecker, and says how the caller is read', () => {
    const source = controller('async create(@Body() body: { sku: string })');
    const opts = options({ header: 'Idempotency-Key', currentUserChecker: true });
    const out = wireSource(file, source, [target(6)], opts);
    expect(out.text).toContain("async create(@Body() body: { sku: string }, @CurrentUser() caller: unknown, @HeaderParam('Idempotency-Key', { type: String }) idempotencyKey: string | undefined, @Res() response: unknown) {");
    expect(out.text).toContain("runOnceInController('createOrder', { caller, key: idempotencyKey, body, response }, async () => {");
    expect(out.manual.map((m) => m.reason)).toContainEqual(expect.stringContaining('apply added a @CurrentUser() parameter'));
    expectIdempotent(out.text, [target(6)], opts);
  });

  it('a global action needs no caller; a derived key needs no header', () => {
    const source = controller('async create(@Body() body: { sku: string })');
    const global = wireSource(file, source, [target(6, { scope: 'global' })], options());
    expect(global.text).toContain("runOnceInController('createOrder', { key: idempotencyKey, body, response }, async () => {");
    expect(global.text).not.toContain('@CurrentUser() caller');
    const derived = wireSource(file, source, [target(6, { scope: 'global', keySource: 'derived' })], options());
    expect(derived.text).toContain("async create(@Body() body: { sku: string }, @Res() response: unknown) {\n    return runOnceInController('createOrder', { body, response }, async () => {");
    expect(derived.text).not.toContain('HeaderParam');
  });

  it('an aliased decorator import is used under its local name', () => {
    const source = controller('async create(@RequestBody() body: { sku: string }, @Caller() user: User)', undefined, 'Body as RequestBody, CurrentUser as Caller, HeaderParam as Header, JsonController, Post');
    const out = wireSource(file, source, [target(6)], options());
    expect(out.text).toContain("@Header('Idempotency-Key', { type: String }) idempotencyKey: string | undefined, @Res() response: unknown");
    expect(out.text).toContain("{ caller: user, key: idempotencyKey, body, response }");
  });

  it('reuses a @Res() the body leaves alone (under its own name and alias), and never adds a second', () => {
    const source = controller('async create(@Body() body: { sku: string }, @CurrentUser() user: User, @Response() res: ExpressResponse)', undefined, 'Body, CurrentUser, JsonController, Post, Res as Response');
    const out = wireSource(file, source, [target(6)], options());
    expect(out.text).toContain("@Response() res: ExpressResponse, @HeaderParam('Idempotency-Key', { type: String }) idempotencyKey: string | undefined) {\n    return runOnceInController('createOrder', { caller: user, key: idempotencyKey, body, response: res }, async () => {");
    expect(out.text.match(/@Res\(|@Response\(/g)).toHaveLength(1);
    expect(out.text).toContain("import { Body, CurrentUser, HeaderParam, JsonController, Post, Res as Response } from 'routing-controllers';");
    expectIdempotent(out.text, [target(6)], options());
  });
});

describe('routing-controllers methods apply leaves as a manual step', () => {
  const refused = (signature: string, extra: Partial<WiringTarget> = {}, opts = options(), body?: string, source = controller(signature, body)) => {
    const out = wireSource(file, source, [target(6, extra)], opts);
    expect(out.stale).toEqual([]);
    expect(out.text).toBe(source);
    expect(out.edits).toEqual([]);
    expect(out.manual).toHaveLength(1);
    expect(out.manual[0]?.reason).toMatch(/^routing-controllers runs @UseBefore middleware before its body parser and authorizationChecker, so the key is claimed inside the method, and /);
    // The step carries the call apply would have written.
    expect(out.manual[0]?.reason).toContain("runOnceInController('createOrder'");
    return out.manual[0]!.reason;
  };

  it('no @Body() parameter: nothing says what a reused key is checked against', () => {
    expect(refused("async create(@Param('id') id: number, @CurrentUser() user: User)")).toContain('it has no @Body() parameter');
  });

  it('a scoped action without @CurrentUser() in a project with no currentUserChecker', () => {
    expect(refused('async create(@Body() body: { sku: string })')).toContain('its keys are scoped per user, and the method has no @CurrentUser() parameter and the project configures no currentUserChecker');
  });

  it('not async: the claim is awaited', () => {
    expect(refused('create(@Body() body: { sku: string }, @CurrentUser() user: User)')).toContain('it is not async');
  });

  it('a result a repeat could not get back the same: not visibly JSON, or nothing on some path', () => {
    expect(refused('async create(@Body() body: { sku: string }, @CurrentUser() user: User)', {}, options(), '    return new Order(body);')).toContain('not visibly JSON');
    expect(refused('async create(@Body() body: { sku: string }, @CurrentUser() user: User): Promise<Date>', {}, options(), '    return new Date();')).toContain('is not JSON');
    expect(refused('async create(@Body() body: { sku: string }, @CurrentUser() user: User)', {}, options(), '    if (body.sku) return { ok: true };')).toContain('it can return nothing');
  });

  it('route parameters whose names apply cannot read (they go into the fingerprint)', () => {
    const source = controller('async create(@Param(ID) id: number, @Body() body: { sku: string }, @CurrentUser() user: User)', undefined, 'Body, CurrentUser, JsonController, Param, Post');
    expect(refused('', {}, options(), undefined, source)).toContain('apply cannot tell the names of its @Param() values');
  });

  it('a method that answers through the response itself', () => {
    const body = "    response.status(202);\n    return { id: 1, sku: body.sku };";
    const source = controller('async create(@Body() body: { sku: string }, @CurrentUser() user: User, @Res() response: ExpressResponse)', body, 'Body, CurrentUser, JsonController, Post, Res');
    expect(refused('', {}, options(), undefined, source)).toContain('it uses the response (@Res() / @Ctx())');
    const koa = controller('async create(@Body() body: { sku: string }, @CurrentUser() user: User, @Ctx() ctx: Context)', "    ctx.status = 202;\n    return { id: 1, sku: body.sku };", 'Body, Ctx, CurrentUser, JsonController, Post');
    expect(refused('', {}, options(), undefined, koa)).toContain('it uses the response (@Res() / @Ctx())');
  });

  it('a file that binds Res to something else', () => {
    const source = controller('async create(@Body() body: { sku: string }, @CurrentUser() user: User)').replace("import type { User } from '../auth.js';", "import { Res, type User } from '../auth.js';");
    expect(refused('', {}, options(), undefined, source)).toContain('the file binds HeaderParam, CurrentUser or Res to something else');
  });

  it('JavaScript: apply writes parameter decorators in TypeScript only', () => {
    const js = 'src/controllers/OrderController.js';
    const source = controller('async create(@Body() body, @CurrentUser() user)').replace("import type { User } from '../auth.js';\n", '');
    const out = wireSource(js, source, [{ ...target(5), file: js }], options());
    expect(out.text).toBe(source);
    expect(out.manual[0]?.reason).toContain('apply edits controller methods in TypeScript only');
  });
});
