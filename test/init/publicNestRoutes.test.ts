import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { runInit } from '../../src/cli/init.js';
import { createLogger } from '../../src/logger.js';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/**
 * The shape of brocoders/nestjs-boilerplate@9620f15 (its sign-up route has no guard, beside routes guarded on the
 * method or the controller, JWT through @nestjs/passport), with a guest checkout as the public route.
 */
async function project(extra: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ib-public-nest-'));
  dirs.push(dir);
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'api', dependencies: { '@nestjs/common': '^10.0.0', '@nestjs/core': '^10.0.0', '@nestjs/passport': '^10.0.0', pg: '^8.11.0' }, devDependencies: { typescript: '^5.4.0', jest: '^29.0.0' } }, null, 2),
    'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2021', module: 'commonjs', experimentalDecorators: true, emitDecoratorMetadata: true, strict: true } }, null, 2),
    'src/db.ts': "import { Pool } from 'pg';\nexport const pool = new Pool({ connectionString: process.env.DATABASE_URL });\n",
    'src/main.ts': "import { NestFactory } from '@nestjs/core';\nimport { AppModule } from './app.module';\nNestFactory.create(AppModule).then((app) => app.listen(3000));\n",
    'src/app.module.ts': "import { Module } from '@nestjs/common';\nimport { AuthController } from './auth.controller';\nimport { OrdersController } from './orders.controller';\n@Module({ controllers: [AuthController, OrdersController] })\nexport class AppModule {}\n",
    'src/auth.controller.ts': `import { Body, Controller, Post, UseGuards } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { pool } from './db';

@Controller('guest')
export class AuthController {
  @Post('orders')
  async placeGuestOrder(@Body() body: { sku: string; email: string }) {
    await pool.query('INSERT INTO orders (sku, email) VALUES ($1, $2)', [body.sku, body.email]);
  }

  @UseGuards(AuthGuard('jwt'))
  @Post('invites')
  async sendInvite(@Body() body: { email: string }) {
    await pool.query('INSERT INTO invites (email) VALUES ($1)', [body.email]);
  }
}
`,
    'src/orders.controller.ts': `import { Body, Controller, Post, UseGuards } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { pool } from './db';

@UseGuards(AuthGuard('jwt'))
@Controller('orders')
export class OrdersController {
  @Post()
  async createOrder(@Body() body: { sku: string }) {
    await pool.query('INSERT INTO orders (sku) VALUES ($1)', [body.sku]);
  }
}
`,
    ...extra,
  };
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), text);
  }
  return dir;
}

async function initScopes(dir: string): Promise<{ scopes: Record<string, string | undefined>; assumptions: string[] }> {
  const out = new PassThrough();
  out.resume();
  await runInit({ cwd: dir, yes: true, date: '2026-01-15' }, { interactive: false, log: createLogger({ out, err: out, color: false }) });
  const config = JSON.parse(await readFile(path.join(dir, 'idempotency.config.json'), 'utf8')) as { actions: Array<{ name: string; scope?: string }>; assumptions: string[] };
  return { scopes: Object.fromEntries(config.actions.map((a) => [a.name, a.scope])), assumptions: config.assumptions };
}

describe('init --yes on NestJS decides each route’s key scope from its guards', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('keys an unguarded guest-checkout route globally (a per-user key would answer every request 401) and guarded routes per user', async () => {
    const { scopes, assumptions } = await initScopes(await project());
    expect(scopes).toEqual({ placeGuestOrder: 'global', sendInvite: undefined, createOrder: undefined });
    expect(assumptions).toContainEqual(expect.stringContaining('Nothing authenticates the route of placeGuestOrder (no guard on the method or its controller'));
  });

  it('a global guard covers the public route unless it opts out with @Public()', async () => {
    const guard = "import { Module } from '@nestjs/common';\nimport { APP_GUARD } from '@nestjs/core';\nimport { AuthGuard } from '@nestjs/passport';\nimport { AuthController } from './auth.controller';\nimport { OrdersController } from './orders.controller';\n@Module({ controllers: [AuthController, OrdersController], providers: [{ provide: APP_GUARD, useClass: AuthGuard('jwt') }] })\nexport class AppModule {}\n";
    const covered = await initScopes(await project({ 'src/app.module.ts': guard }));
    expect(covered.scopes).toEqual({ placeGuestOrder: undefined, sendInvite: undefined, createOrder: undefined });
    const publicDecorator = "import { SetMetadata } from '@nestjs/common';\nexport const IS_PUBLIC_KEY = 'isPublic';\nexport const Public = () => SetMetadata(IS_PUBLIC_KEY, true);\n";
    const optedOut = await initScopes(
      await project({
        'src/app.module.ts': guard,
        'src/public.decorator.ts': publicDecorator,
        'src/auth.controller.ts': (await readFile(path.join(dirs[dirs.length - 1]!, 'src/auth.controller.ts'), 'utf8')).replace("import { pool } from './db';", "import { pool } from './db';\nimport { Public } from './public.decorator';").replace("  @Post('orders')", "  @Public()\n  @Post('orders')"),
      }),
    );
    expect(optedOut.scopes).toEqual({ placeGuestOrder: 'global', sendInvite: undefined, createOrder: undefined });
    expect(optedOut.assumptions).toContainEqual(expect.stringContaining('placeGuestOrder (opts out of the global guard with @Public())'));
  });
});
