import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { runInit } from '../../src/cli/init.js';
import { createLogger } from '../../src/logger.js';
import { tempProject } from '../helpers/tempProject.js';

/**
 * The shape of paypal-examples/docs-examples@8095379 (standard-integration/server/node/server.js): an ES-module
 * Express server in plain JavaScript, the PayPal server SDK's calls in helpers the routes call, each taking a request
 * built in a `const collect = { … }` first.
 */
const SERVER = `import express from "express";
import { Client, Environment, OrdersController } from "@paypal/paypal-server-sdk";

const app = express();
app.use(express.json());

const client = new Client({ clientCredentialsAuthCredentials: { oAuthClientId: "id", oAuthClientSecret: "secret" }, timeout: 0, environment: Environment.Sandbox });
const ordersController = new OrdersController(client);

const createOrder = async (cart) => {
  const collect = {
    body: { intent: "CAPTURE", purchaseUnits: [{ amount: { currencyCode: "USD", value: "100.00" } }] },
    prefer: "return=minimal",
  };
  const { body, ...httpResponse } = await ordersController.createOrder(collect);
  return { jsonResponse: JSON.parse(body), httpStatusCode: httpResponse.statusCode };
};

const captureOrder = async (orderID) => {
  const collect = { id: orderID, prefer: "return=minimal" };
  const { body, ...httpResponse } = await ordersController.captureOrder(collect);
  return { jsonResponse: JSON.parse(body), httpStatusCode: httpResponse.statusCode };
};

app.post("/api/orders", async (req, res) => {
  const { jsonResponse, httpStatusCode } = await createOrder(req.body.cart);
  res.status(httpStatusCode).json(jsonResponse);
});

app.post("/api/orders/:orderID/capture", async (req, res) => {
  const { jsonResponse, httpStatusCode } = await captureOrder(req.params.orderID);
  res.status(httpStatusCode).json(jsonResponse);
});

app.listen(8080);
`;

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("PayPal's example Express server (ES modules, plain JavaScript)", { timeout: 300_000 }, () => {
  it('apply imports the instance with .js, and threads the key into the helpers through their const requests', async () => {
    const dir = await tempProject({ 'package.json': JSON.stringify({ name: 'paypal-server', type: 'module', dependencies: { '@paypal/paypal-server-sdk': '^1.0.0', express: '^4.18.2' } }), 'server.js': SERVER }, 'ib-paypal-');
    dirs.push(dir);
    const out = new PassThrough();
    out.resume();
    const log = createLogger({ out, err: out, color: false });
    await runInit({ cwd: dir, yes: true, date: '2026-01-15' }, { interactive: false, log });
    const result = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
    expect(result.stale).toEqual([]);
    const server = await readFile(path.join(dir, 'server.js'), 'utf8');
    // Node's ES module loader needs the extension; server.js had no relative import to copy it from.
    expect(server).toContain('import { idempotency } from "./idempotency/instance.js";');
    expect(server).toContain('const createOrder = async (cart, idempotencyContext) => {');
    expect(server).toContain('const captureOrder = async (orderID, idempotencyContext) => {');
    expect(server.match(/paypalRequestId: idempotencyContext \? paypalRequestId\(idempotencyContext\) : undefined/g)).toHaveLength(2);
    // `ordersController.createOrder(…)` is the SDK's method, not another caller of the helper of that name.
    const reasons = result.manual.map((m) => m.reason).join('\n');
    expect(reasons).not.toContain('is also called at');
    expect(reasons).not.toContain('not made inside the route handler');
  });
});
