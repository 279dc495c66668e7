import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ib-shared-prisma-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

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
