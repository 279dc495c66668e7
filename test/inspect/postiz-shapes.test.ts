import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';
import { tempProjectSync } from '../helpers/tempProject.js';

const project = (files: Record<string, string>) => tempProjectSync(files, 'ib-shared-prisma-');

const schema = (provider: string) => `datasource db {\n  provider = "${provider}"\n  url      = env("DATABASE_URL")\n}\n`;

// The gitroomhq/postiz-app layout: every dependency in the root package.json, a Prisma schema in a shared library
// folder that is no workspace package, and an API package that declares nothing itself.
const workspace = (schemas: Record<string, string>) =>
  project({
    'package.json': JSON.stringify({ name: 'root', private: true, workspaces: ['apps/*'], dependencies: { '@nestjs/core': '^11.0.0', '@nestjs/common': '^11.0.0', next: '^15.0.0', '@prisma/client': '6.5.0', ioredis: '^5.0.0' } }),
    'apps/api/package.json': JSON.stringify({ name: 'api' }),
    'apps/api/src/orders.controller.ts': "import { Controller, Post, Body } from '@nestjs/common';\n@Controller('orders')\nexport class OrdersController {\n  @Post()\n  create(@Body() body: unknown) {\n    return body;\n  }\n}\n",
    ...schemas,
  });

describe('a workspace package without a Prisma schema of its own', () => {
  it('reads the database from the repository schema it shares', async () => {
    const inspection = await inspectProject(workspace({ 'libraries/db/prisma/schema.prisma': schema('postgresql') }));
    const api = inspection.stack.packages?.find((p) => p.dir === 'apps/api');
    expect(api?.stack.databases).toEqual(['postgres', 'redis']);
  });

  it('settles nothing when the repository holds schemas for different databases', async () => {
    const inspection = await inspectProject(workspace({ 'libraries/a/schema.prisma': schema('postgresql'), 'libraries/b/schema.prisma': schema('mysql') }));
    expect(inspection.stack.packages?.find((p) => p.dir === 'apps/api')?.stack.databases).toEqual(['redis']);
  });
});

describe('routes named like webhooks', () => {
  it('the app managing its own webhook settings is CRUD, not an inbound webhook; a POST receiver still is', async () => {
    // gitroomhq/postiz-app's WebhookController, and a receiver with no signature check.
    const dir = project({
      'package.json': JSON.stringify({ name: 'app', dependencies: { '@nestjs/core': '^11.0.0', '@nestjs/common': '^11.0.0' } }),
      'src/webhooks.controller.ts': `import { Body, Controller, Delete, Param, Post, Put, Query } from '@nestjs/common';
@Controller('/webhooks')
export class WebhookController {
  @Post('/')
  createAWebhook(@Body() body: unknown) { return body; }
  @Put('/')
  updateWebhook(@Body() body: unknown) { return body; }
  @Delete('/:id')
  deleteWebhook(@Param('id') id: string) { return id; }
  @Post('/send')
  async sendWebhook(@Body() body: unknown, @Query() query: { url: string }) { await fetch(query.url, { method: 'POST', body: JSON.stringify(body) }); }
}
@Controller('/hooks')
export class ReceiverController {
  @Post('/carrier')
  handleCarrierEvent(@Body() body: unknown) { return body; }
}
`,
    });
    const inspection = await inspectProject(dir);
    expect(inspection.findings.filter((f) => f.kind === 'webhook').map((f) => f.kind === 'webhook' && f.route)).toEqual(['POST /hooks/carrier']);
  });
});

describe('setInterval', () => {
  it('a timer cleared in the function that starts it (a heartbeat while a call runs) is no scheduled job; one at module level is', async () => {
    const dir = project({
      'package.json': JSON.stringify({ name: 'app', dependencies: { '@temporalio/activity': '^1.14.0' } }),
      'src/heartbeat.ts': `export const withHeartbeat = async <T>(fn: () => Promise<T>): Promise<T> => {
  const interval = setInterval(() => beat(), 15_000);
  try {
    return await fn();
  } finally {
    clearInterval(interval);
  }
};
declare function beat(): void;
`,
      'src/jobs.ts': 'declare function flushOutbox(): Promise<void>;\nsetInterval(() => void flushOutbox(), 60_000);\n',
    });
    const crons = (await inspectProject(dir)).findings.filter((f) => f.kind === 'cron').map((f) => f.file);
    expect(crons).toEqual(['src/jobs.ts']);
  });
});

describe('imports through the workspace tsconfig `paths` aliases', () => {
  // An Nx layout: the alias is declared in tsconfig.base.json (reached through `extends`), the service lives in a
  // library folder that is no workspace package, and the controller reaches it only through the alias.
  it('follows them from a controller to the Stripe call and the insert in a shared library', async () => {
    const dir = project({
      'package.json': JSON.stringify({ name: 'root', private: true, dependencies: { '@nestjs/core': '^11.0.0', '@nestjs/common': '^11.0.0', stripe: '^17.0.0' } }),
      'tsconfig.base.json': JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { '@acme/billing/*': ['libs/billing/src/*'] } } }),
      'tsconfig.json': JSON.stringify({ extends: './tsconfig.base.json' }),
      'apps/api/src/billing.controller.ts': `import { Body, Controller, Post } from '@nestjs/common';
import { charge } from '@acme/billing/charge';
@Controller('billing')
export class BillingController {
  @Post('charge')
  create(@Body() body: { amount: number }) {
    return charge(body.amount);
  }
}
`,
      'libs/billing/src/charge.ts': `import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_KEY ?? '');
export async function charge(amount: number) {
  return stripe.paymentIntents.create({ amount, currency: 'eur' });
}
`,
    });
    const inspection = await inspectProject(dir);
    const route = inspection.findings.find((f) => f.kind === 'endpoint' && f.path === '/billing/charge');
    expect(route).toMatchObject({ touchesPayment: true });
  });

  it('resolves a router mounted from a library folder reached through an alias, prefix and authentication included', async () => {
    const dir = project({
      'package.json': JSON.stringify({ name: 'root', private: true, dependencies: { express: '^4.19.0', jsonwebtoken: '^9.0.0' } }),
      'tsconfig.json': JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { '@acme/orders/*': ['libs/orders/src/*'], '@acme/auth/*': ['libs/auth/src/*'] } } }),
      'libs/auth/src/session.ts': `import jwt from 'jsonwebtoken';
import type { NextFunction, Request, Response } from 'express';
export function requireUser(req: Request, res: Response, next: NextFunction) {
  (req as { user?: unknown }).user = jwt.verify(req.headers.authorization ?? '', 'secret');
  next();
}
`,
      'libs/orders/src/router.ts': `import { Router } from 'express';
import { requireUser } from '@acme/auth/session';
export const ordersRouter = Router();
ordersRouter.post('/', requireUser, (req, res) => res.status(201).json(req.body));
`,
      'apps/api/src/app.ts': `import express from 'express';
import { ordersRouter } from '@acme/orders/router';
const app = express();
app.use(express.json());
app.use('/api/orders', ordersRouter);
app.listen(3000);
`,
    });
    const inspection = await inspectProject(dir);
    const routes = inspection.findings.filter((f) => f.kind === 'endpoint').map((f) => `${f.method} ${f.path} ${f.prefixResolved}`);
    expect(routes).toEqual(['POST /api/orders true']);
    expect(inspection.routeAuthentication?.map((r) => `${r.method} ${r.path}: ${r.by.join(', ')}`)).toEqual(['POST /api/orders: requireUser']);
  });
});
