import { createRequire } from 'node:module';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import express from 'express';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor } from './generateInto.js';
import { listen, loadScaffold, type Loose } from './harness.js';
import { generateJavaScriptProject, SCAFFOLD_DIR } from './javascriptProject.js';

interface Variant {
  readonly label: string;
  readonly route: string;
  readonly action: string;
  readonly body: Record<string, unknown>;
  /** Writes the scaffold and returns its index module and a folder to remove afterwards. */
  load(): Promise<{ scaffold: Record<string, Loose>; dir: string }>;
}

const reject = (raw: Record<string, unknown>) => {
  // Duplicates answer 409 at once, so the test knows when every one of them has been turned away.
  raw.inFlight = 'reject';
};

/** The generated Express scaffold in TypeScript (compiled by tsc) and as a JavaScript project in each module format. */
const VARIANTS: readonly Variant[] = [
  {
    label: 'TypeScript',
    route: '/payments',
    action: 'createPayment',
    body: { amount: 4999, currency: 'EUR', recipientId: 'acct_xyz' },
    load: async () => {
      const generated = await generateAndCompile(await modelFor('express-stripe-payments', reject), 'memstore');
      expect(generated.tscOutput).toBe('');
      return { scaffold: await loadScaffold(generated), dir: generated.dir };
    },
  },
  ...(['module', 'commonjs'] as const).map(
    (moduleType): Variant => ({
      label: `JavaScript (${moduleType})`,
      route: '/orders',
      // Transactional in the design: without claimInTransaction the memory store runs it in lease mode.
      action: 'placeOrder',
      body: { customerId: 'cus_1', items: [{ sku: 'sku_1', quantity: 2 }], shippingAddressId: 'adr_1' },
      load: async () => {
        const project = await generateJavaScriptProject('express-js-orders', moduleType);
        const index = path.join(project.dir, SCAFFOLD_DIR, 'index.js');
        const scaffold =
          moduleType === 'commonjs'
            ? (createRequire(import.meta.url)(index) as Record<string, Loose>)
            : ((await import(pathToFileURL(index).href)) as Record<string, Loose>);
        return { scaffold, dir: project.dir };
      },
    }),
  ),
];

const N = 24;

describe.each(VARIANTS)('Express scaffold on createMemoryStore(), $label: no database at all', (variant) => {
  let dir = '';
  let server: Awaited<ReturnType<typeof listen>> | undefined;
  let policy: Loose;
  // Nothing listens on port 1: any store call that reached the database would fail, and the request answer 503.
  const pool = new pg.Pool({ connectionString: 'postgres://memstore@127.0.0.1:1/memstore', connectionTimeoutMillis: 500 });
  let executions = 0;
  let openGate: () => void = () => undefined;
  let gate = Promise.resolve();
  let secondExecution: () => void = () => undefined;

  beforeAll(async () => {
    const loaded = await variant.load();
    dir = loaded.dir;
    const { createIdempotency, createMemoryStore, POLICY } = loaded.scaffold;
    policy = POLICY;
    const idempotency = createIdempotency({ pool, principal: (req: express.Request) => req.header('x-user'), store: createMemoryStore() });
    const app = express();
    app.use(express.json());
    app.post(variant.route, idempotency[variant.action], async (req: express.Request, res: express.Response) => {
      executions += 1;
      if (executions > 1) secondExecution();
      await gate;
      res.status(201).json({ id: `run_${executions}`, echo: req.body });
    });
    server = await listen(app);
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    await pool.end();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const send = (body: Record<string, unknown> = variant.body) =>
    fetch(`${server!.url}${variant.route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'memstore-key-1', 'x-user': 'usr_1' },
      body: JSON.stringify(body),
    }).then(async (response) => ({
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      replayed: response.headers.get(policy.replayHeader),
      body: await response.text(),
    }));

  it(`${N} concurrent requests with one key: one execution, the others 409 with Retry-After, then replays`, async () => {
    gate = new Promise<void>((resolve) => (openGate = resolve));
    // The one execution holds its claim until every duplicate has been answered (or a second execution began).
    let answered = 0;
    let othersAnswered: () => void = () => undefined;
    const waitForOthers = new Promise<void>((resolve) => (othersAnswered = resolve));
    secondExecution = othersAnswered;
    const all = Array.from({ length: N }, () =>
      send().then((response) => {
        answered += 1;
        if (answered === N - 1) othersAnswered();
        return response;
      }),
    );
    await waitForOthers;
    openGate();
    const responses = await Promise.all(all);
    expect(executions).toBe(1);
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([201, ...Array.from({ length: N - 1 }, () => 409)]);
    for (const response of responses.filter((r) => r.status === 409)) expect(Number(response.retryAfter)).toBeGreaterThan(0);
    const first = responses.find((response) => response.status === 201)!;

    // Afterwards every duplicate, concurrent or not, gets the stored bytes without running again.
    const replays = await Promise.all(Array.from({ length: N }, () => send()));
    for (const replay of replays) expect(replay).toMatchObject({ status: 201, replayed: 'true', body: first.body });
    expect(executions).toBe(1);

    // The same key with another request is refused, never replayed or run.
    const other = await send({ ...variant.body, shippingAddressId: 'adr_2', amount: 1 });
    expect(other.status).toBe(policy.mismatchStatus);
    expect(other.body).not.toBe(first.body);
    expect(executions).toBe(1);
  });
});
