import { describe, expect, it } from 'vitest';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import { requestPropertyIn } from '../../src/apply/graphqlContext.js';
import type { WiringTarget } from '../../src/apply/types.js';

const file = 'src/graphql/orders.ts';
const options = (server: string | undefined, extra: Partial<WireSourceOptions> = {}): WireSourceOptions => ({
  framework: 'plain',
  scaffoldDir: 'src/idempotency',
  imports: { aliases: [], defaultExtension: '.js' },
  scaffoldModules: new Set(['index', 'instance']),
  graphql: { header: 'Idempotency-Key', ...(server ? { server } : {}) },
  ...extra,
});
const target = (line: number, extra: Partial<WiringTarget> = {}): WiringTarget => ({ action: 'placeOrder', codeName: 'placeOrder', trigger: 'http', transport: 'graphql', file, line, scope: 'global', keySource: 'client', ...extra });

/** Applying to its own output changes nothing. */
function expectIdempotent(text: string, targets: WiringTarget[], opts: WireSourceOptions): void {
  const again = wireSource(file, text, targets, { ...opts, anyLine: true });
  expect(again.text).toBe(text);
  expect(again.edits).toEqual([]);
}

const resolverMap = (context = '') => `import { createOrder } from '../orders.js';

export const resolvers = {
  Mutation: {
    placeOrder: async (_parent: unknown, args: { sku: string; quantity: number }${context}) => {
      const order = await createOrder(args.sku, args.quantity);
      return { id: order.id, sku: order.sku };
    },
  },
};
`;

describe('GraphQL resolver maps on graphql-yoga', () => {
  it("adds the context parameter and keys the call by yoga's request header", () => {
    const out = wireSource(file, resolverMap(), [target(5)], options('graphql-yoga'));
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("import { idempotency } from '../idempotency/instance.js';");
    expect(out.text).toContain(`    placeOrder: async (_parent: unknown, args: { sku: string; quantity: number }, context: { request: { headers: { get(name: string): string | null } } }) => {
      return idempotency.placeOrder({ key: context.request.headers.get('idempotency-key') ?? undefined, fingerprintInput: args }, async () => {
        const order = await createOrder(args.sku, args.quantity);
        return { id: order.id, sku: order.sku };
      });
    },`);
    expect(out.edits.map((e) => e.summary)).toEqual(['runs placeOrder inside idempotency.placeOrder(…), keyed by the Idempotency-Key header of the request in its GraphQL context, its arguments fingerprinted']);
    expect(out.manual.map((m) => m.reason)).toEqual([expect.stringMatching(/^callers must now send/), expect.stringMatching(/^graphql-yoga masks/)]);
    expectIdempotent(out.text, [target(5)], options('graphql-yoga'));
  });

  it("reads the header from the context parameter the resolver already takes (yoga's own type), with the configured header's name", () => {
    const text = resolverMap(', ctx: YogaInitialContext');
    const out = wireSource(file, text, [target(5)], options('graphql-yoga', { graphql: { server: 'graphql-yoga', header: 'X-Request-Key' } }));
    expect(out.text).toContain("return idempotency.placeOrder({ key: ctx.request.headers.get('x-request-key') ?? undefined, fingerprintInput: args }, async () => {");
  });

  it('fingerprints destructured arguments as the object of what the resolver reads', () => {
    const text = resolverMap().replace('args: { sku: string; quantity: number }', "{ sku, quantity: qty, 'gift-note': note }: { sku: string; quantity: number; 'gift-note'?: string }").replace('createOrder(args.sku, args.quantity)', 'createOrder(sku, qty, note)');
    const out = wireSource(file, text, [target(5)], options('graphql-yoga'));
    expect(out.text).toContain("return idempotency.placeOrder({ key: context.request.headers.get('idempotency-key') ?? undefined, fingerprintInput: { sku, quantity: qty, 'gift-note': note } }, async () => {");
    expectIdempotent(out.text, [target(5)], options('graphql-yoga'));
  });

  it('wraps an object method shorthand the same way', () => {
    const text = resolverMap().replace('placeOrder: async (_parent: unknown, args: { sku: string; quantity: number }) =>', 'async placeOrder(_parent: unknown, args: { sku: string; quantity: number })');
    const out = wireSource(file, text, [target(5)], options('graphql-yoga'));
    expect(out.text).toContain("async placeOrder(_parent: unknown, args: { sku: string; quantity: number }, context: { request: { headers: { get(name: string): string | null } } }) {\n      return idempotency.placeOrder({ key: context.request.headers.get('idempotency-key') ?? undefined, fingerprintInput: args }, async () => {");
  });

  it('leaves a context typed as a project interface as a step naming the line: apply cannot tell it holds the request', () => {
    const text = resolverMap(', ctx: AppContext');
    const out = wireSource(file, text, [target(5)], options('graphql-yoga'));
    expect(out.text).toBe(text);
    expect(out.manual).toEqual([{ action: 'placeOrder', file, line: 5, reason: expect.stringContaining("typed as AppContext, which apply cannot tell holds `request`: wrap its body as `return idempotency.placeOrder({ key: <context>.request.headers.get('idempotency-key') ?? undefined, fingerprintInput: args }") }]);
  });

  it('a scoped action stays a step: the plain instance cannot tell who calls', () => {
    const out = wireSource(file, resolverMap(), [target(5, { scope: 'user' })], options('graphql-yoga'));
    expect(out.text).toBe(resolverMap());
    expect(out.manual.map((m) => m.reason)).toEqual([expect.stringContaining("its keys are scoped per user, and apply cannot tell how the caller is known here: wrap its body as `return idempotency.placeOrder({ scope: <the user id>, key: context.request.headers.get('idempotency-key') ?? undefined, fingerprintInput: args }")]);
  });
});

describe('a JavaScript resolver map', () => {
  it('gets the context parameter without a type', () => {
    const js = 'src/graphql/orders.js';
    const text = resolverMap().replace(': unknown', '').replace(': { sku: string; quantity: number }', '');
    const out = wireSource(js, text, [target(5, { file: js })], options('graphql-yoga'));
    expect(out.text).toContain("placeOrder: async (_parent, args, context) => {\n      return idempotency.placeOrder({ key: context.request.headers.get('idempotency-key') ?? undefined, fingerprintInput: args }, async () => {");
  });
});

describe('GraphQL servers whose context is the project’s own', () => {
  for (const server of ['@apollo/server', 'mercurius', undefined]) {
    it(`${server ?? 'an unknown server'}: a step saying which line to adapt, no guess`, () => {
      const out = wireSource(file, resolverMap(', ctx: AppContext'), [target(5)], options(server));
      expect(out.text).toBe(resolverMap(', ctx: AppContext'));
      expect(out.edits).toEqual([]);
      expect(out.manual).toEqual([{ action: 'placeOrder', file, line: 5, reason: expect.stringMatching(/^its key is the Idempotency-Key header of the request, and apply cannot tell where .* context puts the request .*: wrap its body as `return idempotency\.placeOrder\(\{ key: <the Idempotency-Key header, read from the request your context function passes>, fingerprintInput: args \}/) }]);
    });
  }
});

describe('TypeGraphQL @Mutation() methods', () => {
  const resolver = (ctx: string) => `import { Arg, Ctx, Int, Mutation, Resolver } from 'type-graphql';
import { Order } from './order.js';

@Resolver(() => Order)
export class OrderResolver {
  @Mutation(() => Order)
  async placeOrder(@Arg('sku') sku: string, @Arg('quantity', () => Int) qty: number${ctx}): Promise<Order> {
    return Order.place(sku, qty);
  }
}
`;

  it('fingerprints the @Arg() parameters by their GraphQL names and reads the key from the @Ctx() parameter', () => {
    const text = resolver(', @Ctx() ctx: YogaInitialContext');
    const out = wireSource(file, text, [target(6)], options('graphql-yoga'));
    expect(out.text).toContain(`  async placeOrder(@Arg('sku') sku: string, @Arg('quantity', () => Int) qty: number, @Ctx() ctx: YogaInitialContext): Promise<Order> {
    return idempotency.placeOrder({ key: ctx.request.headers.get('idempotency-key') ?? undefined, fingerprintInput: { sku, quantity: qty } }, async () => {
      return Order.place(sku, qty);
    });
  }`);
    expectIdempotent(out.text, [target(6)], options('graphql-yoga'));
  });

  it('without a @Ctx() parameter: a step, nothing edited', () => {
    const out = wireSource(file, resolver(''), [target(6)], options('graphql-yoga'));
    expect(out.text).toBe(resolver(''));
    expect(out.manual.map((m) => m.reason)).toEqual([expect.stringContaining('the method takes no @Ctx() parameter: add one and wrap its body as `return idempotency.placeOrder({ key: <context>.request.headers.get(\'idempotency-key\') ?? undefined, fingerprintInput: { sku, quantity: qty } }')]);
  });
});

describe('Apollo Server: the request where the project’s context function puts it', () => {
  const apollo = (requestProperty: string) => options('@apollo/server', { graphql: { server: '@apollo/server', header: 'Idempotency-Key', requestProperty } });

  it('adds a context parameter typed with just that property and reads the Node header from it', () => {
    const out = wireSource(file, resolverMap(), [target(5)], apollo('req'));
    expect(out.text).toContain(`    placeOrder: async (_parent: unknown, args: { sku: string; quantity: number }, context: { req: { headers: Record<string, string | string[] | undefined> } }) => {
      return idempotency.placeOrder({ key: context.req.headers['idempotency-key']?.toString(), fingerprintInput: args }, async () => {`);
    // Apollo does not mask errors: only the callers' header is left.
    expect(out.manual.map((m) => m.reason)).toEqual([expect.stringMatching(/^callers must now send/)]);
    expectIdempotent(out.text, [target(5)], apollo('req'));
  });

  it("uses the resolver's context parameter when its type (an interface of the file) declares the property", () => {
    const text = `import type { IncomingMessage } from 'node:http';\n\ninterface AppContext {\n  request: IncomingMessage;\n  userId?: string;\n}\n\n${resolverMap(', ctx: AppContext')}`;
    const out = wireSource(file, text, [target(12)], apollo('request'));
    expect(out.text).toContain("return idempotency.placeOrder({ key: ctx.request.headers['idempotency-key']?.toString(), fingerprintInput: args }, async () => {");
  });

  it('a context type that does not show the property stays a step naming it', () => {
    const out = wireSource(file, resolverMap(', ctx: AppContext'), [target(5)], apollo('req'));
    expect(out.text).toBe(resolverMap(', ctx: AppContext'));
    expect(out.manual).toEqual([{ action: 'placeOrder', file, line: 5, reason: expect.stringContaining("puts in the context as `req`, and this resolver's context parameter is typed as AppContext, which apply cannot tell holds `req`: wrap its body as `return idempotency.placeOrder({ key: <context>.req.headers['idempotency-key']?.toString(), fingerprintInput: args }") }]);
  });
});

describe('requestPropertyIn: where an Apollo context function puts the request', () => {
  const server = (context: string, extra = '') => `import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
${extra}
const server = new ApolloServer({ typeDefs, resolvers });
await startStandaloneServer(server, { listen: { port: 4000 }, ${context} });
`;
  it.each([
    ['context: async ({ req }) => ({ req })', 'req'],
    ['context: async ({ req }) => ({ request: req, user: await userOf(req) })', 'request'],
    ['context: async ({ req: incoming }) => ({ incoming })', 'incoming'],
    ['context: async (args) => ({ http: args.req })', 'http'],
    ['async context({ req }) { if (!req) return { req }; return { req }; }', 'req'],
  ])('%s', (context, property) => {
    expect(requestPropertyIn('src/server.ts', server(context))).toBe(property);
  });

  it('follows a context function declared in the file', () => {
    expect(requestPropertyIn('src/server.ts', server('context: buildContext', 'const buildContext = async ({ req }: { req: IncomingMessage }) => ({ req, loaders: makeLoaders() });'))).toBe('req');
  });

  it.each([
    ['context: async () => ({ user: null })'],
    ['context: async ({ req }) => buildContext(req)'],
    ['context: async ({ req }) => ({ ...base, req: undefined })'],
    ['context: async ({ req }) => { if (req.headers.a) return { req }; return { request: req }; }'],
  ])('%s: nothing apply can read', (context) => {
    expect(requestPropertyIn('src/server.ts', server(context))).toBeUndefined();
  });
});
