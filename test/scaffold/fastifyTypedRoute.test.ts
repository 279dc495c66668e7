import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor, ROOT } from './generateInto.js';

const run = promisify(execFile);

// A route whose handler types its request (binarytracer/fastify-api: `FastifyRequest<{ Body: CreateUser }>`): apply
// spreads the hooks into its options, and hooks typed for the default route generic made Fastify reject the handler.
const ROUTE = `import Fastify, { type FastifyReply, type FastifyRequest, type FastifyTypeProvider } from 'fastify';
import type { IdempotentRoute } from './idempotency/fastify.js';

declare const hooks: IdempotentRoute;
const app = Fastify();
app.post(
  '/orders',
  { ...hooks, schema: { body: { type: 'object' } } },
  async (request: FastifyRequest<{ Body: { amount: number }; Params: { shop: string } }>, reply: FastifyReply) =>
    reply.status(201).send({ amount: request.body.amount, shop: request.params.shop }),
);

// A type provider (fastify/demo@1f50cc1 uses TypeBox's): the route's types come from its schema. Hooks whose types
// name the route's generics gave the schema a second inference candidate, and request.params became unknown.
type Typed<T> = { readonly type: 'object'; readonly __static?: T };
interface TypedProvider extends FastifyTypeProvider {
  readonly validator: this['schema'] extends Typed<infer T> ? T : unknown;
  readonly serializer: this['schema'] extends Typed<infer T> ? T : unknown;
}
const params: Typed<{ id: number }> = { type: 'object' };
const typed = Fastify().withTypeProvider<TypedProvider>();
typed.post('/tasks/:id/assign', { ...hooks, schema: { params } }, async (request) => ({ id: request.params.id + 1 }));
typed.post(
  '/tasks/:id/upload',
  { schema: { params }, preHandler: [async () => undefined, hooks.preHandler], onSend: hooks.onSend },
  async (request) => ({ id: request.params.id + 1 }),
);
export default app;
`;

describe('the Fastify hooks spread into a route with a typed handler', () => {
  let dir = '';
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('compiles under tsc --strict', { timeout: 180_000 }, async () => {
    const generated = await generateAndCompile(await modelFor('minimal-one-action'), 'fastify-typed-route');
    dir = generated.dir;
    expect(generated.tscOutput).toBe('');
    await writeFile(path.join(dir, 'src', 'typedRoute.ts'), ROUTE);
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const output = await run(process.execPath, [tsc, '-p', dir, '--noEmit'], { cwd: dir }).then(
      () => '',
      (error: { stdout?: string }) => String(error.stdout),
    );
    expect(output).toBe('');
  });
});
