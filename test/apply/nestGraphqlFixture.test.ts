import { readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { auditProject } from '../../src/findings/auditProject.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { installNestGraphql, NEST_GRAPHQL_CACHE } from '../scaffold/nestGraphqlPackages.js';
import { createAppSchema, type AppSchema } from './blackBox.js';
import { applyAgain, compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

const postgresSkip = await postgresSkipReason();
const skip = postgresSkip ?? (await installNestGraphql());
if (skip) console.warn(`skipped: ${skip}`);

interface Answer {
  data: { placeOrder: { id: string; sku: string; quantity: number } | null } | null;
  errors?: Array<{ extensions: { code?: string; originalError?: Record<string, unknown> } }>;
}

/**
 * Issue #19 for NestJS GraphQL: apply marks the fixture's code-first @Mutation() resolver method with
 * @Idempotent(ACTIONS.placeOrder) and registers the interceptor in the root module; the app type-checks, a second
 * apply changes nothing, and the compiled app (Apollo on Express) runs a mutation sent twice with one key once.
 */
describe.skipIf(skip !== undefined)('apply on the NestJS GraphQL fixture', () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('nestjs-graphql');
    // The app's own node_modules: the GraphQL packages; Nest, pg and the rest resolve from this repository's.
    await symlink(path.join(NEST_GRAPHQL_CACHE, 'node_modules'), path.join(copy.dir, 'node_modules'), 'dir');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('marks the resolver method under its @Mutation(), registers the providers, type-checks, and is a no-op the second time', async () => {
    const unwrapped = async () => (await auditProject(copy.dir)).findings.filter((f) => f.ruleId === 'action-not-wrapped');
    expect((await unwrapped()).map((f) => f.fix)).toEqual([expect.stringMatching(/^Mark the resolver method with `@Idempotent\(ACTIONS\.placeOrder\)`/)]);
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    // Only the callers' key header is left to do: nothing says the mutation must be wired by hand.
    expect(first.manual.map((step) => step.reason)).toEqual([expect.stringMatching(/^callers must now send an Idempotency-Key header/)]);
    const resolver = await readFile(path.join(copy.dir, 'src/orders.resolver.ts'), 'utf8');
    expect(resolver).toContain("import { Idempotent, ACTIONS } from './idempotency/index.js';");
    expect(resolver).toMatch(/ {2}@Mutation\(\(\) => Order\)\n {2}@Idempotent\(ACTIONS\.placeOrder\)\n {2}async placeOrder\(/);
    const appModule = await readFile(path.join(copy.dir, 'src/app.module.ts'), 'utf8');
    expect(appModule).toContain('providers: [OrdersResolver, ...idempotencyProviders(idempotency)]');
    expect(await compile(copy.dir)).toBe('');
    expect(await unwrapped()).toEqual([]);

    await applyAgain(copy.dir);
  }, 240_000);

  it('a resolver whose service calls Stripe: the service reads the claim the interceptor runs the resolver under, the resolver is only marked', async () => {
    const stripeCopy = await copyFixture('nestjs-graphql', (text) => text.replace('"significantFields"', '"provider": "stripe",\n      "significantFields"').replace('orders.resolver.ts:18', 'orders.resolver.ts:21'));
    try {
      await symlink(path.join(NEST_GRAPHQL_CACHE, 'node_modules'), path.join(stripeCopy.dir, 'node_modules'), 'dir');
      await writeFile(
        path.join(stripeCopy.dir, 'src/billing.service.ts'),
        `import { Injectable } from '@nestjs/common';
import Stripe from 'stripe';

@Injectable()
export class BillingService {
  private readonly stripe = new Stripe('sk_test_placeholder');

  async charge(amount: number) {
    return this.stripe.paymentIntents.create({ amount, currency: 'eur' });
  }
}
`,
      );
      const resolverFile = path.join(stripeCopy.dir, 'src/orders.resolver.ts');
      const original = await readFile(resolverFile, 'utf8');
      await writeFile(
        resolverFile,
        original
          .replace("import { db } from './db.js';", "import { BillingService } from './billing.service.js';\nimport { db } from './db.js';")
          .replace('export class OrdersResolver {', 'export class OrdersResolver {\n  constructor(private readonly billing: BillingService) {}\n')
          .replace('    const { rows }', '    await this.billing.charge(quantity * 100);\n    const { rows }'),
      );
      const moduleFile = path.join(stripeCopy.dir, 'src/app.module.ts');
      await writeFile(moduleFile, (await readFile(moduleFile, 'utf8')).replace('providers: [OrdersResolver]', 'providers: [OrdersResolver, BillingService]').replace("import { OrdersResolver } from './orders.resolver.js';", "import { BillingService } from './billing.service.js';\nimport { OrdersResolver } from './orders.resolver.js';"));

      const result = await runApply({ cwd: stripeCopy.dir, yes: true, quiet: true }, { interactive: false });
      expect(result.stale).toEqual([]);
      const resolver = await readFile(resolverFile, 'utf8');
      expect(resolver).not.toContain('@Context(');
      expect(resolver).not.toContain('idempotencyContext');
      const billing = await readFile(path.join(stripeCopy.dir, 'src/billing.service.ts'), 'utf8');
      expect(billing).toContain('  async charge(amount: number) {\n    const idempotencyContext = idempotencyOf();\n');
      expect(billing).toContain('idempotencyContext ? stripeRequestOptions(idempotencyContext) : undefined');
      expect(await compile(stripeCopy.dir)).toBe('');
    } finally {
      await stripeCopy.remove();
    }
  }, 240_000);

  it('the applied app runs a mutation sent twice with one key once, and refuses other arguments under that key', async () => {
    schema = await createAppSchema('wt_nestgql', copy.migration, 'CREATE TABLE orders (id serial PRIMARY KEY, sku text NOT NULL, quantity int NOT NULL)');
    Object.assign(process.env, { DATABASE_URL: schema.url });
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Promise<INestApplication> };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: { end(): Promise<void> } };
    const app = await createApp();
    await app.listen(0, '127.0.0.1');
    const url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/graphql`;
    const place = async (key: string, quantity: number): Promise<Answer> => {
      const query = 'mutation { placeOrder(sku: "SKU-1", quantity: ' + String(quantity) + ') { id sku quantity } }';
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-account': 'acct_1' }, body: JSON.stringify({ query }) });
      return (await response.json()) as Answer;
    };
    const count = async () => (await schema!.pool.query('SELECT count(*)::int AS n FROM orders')).rows[0].n as number;
    try {
      const first = await place('fixture-key', 2);
      expect(first.errors).toBeUndefined();
      expect(await place('fixture-key', 2)).toEqual(first);
      expect(await count()).toBe(1);
      const other = await place('fixture-key', 3);
      expect(other.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', originalError: { status: 422 } });
      expect(await count()).toBe(1);
    } finally {
      await app.close();
      await db.end();
    }
  }, 240_000);
});
