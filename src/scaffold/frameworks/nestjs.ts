import type { HttpFramework } from '../httpFramework.js';

/** NestJS on its default Express platform: one global interceptor, routes marked with @Idempotent(ACTIONS.name). */
export const NESTJS: HttpFramework = {
  module: 'nestjs',
  optionsType: 'NestIdempotencyOptions',
  exports:
    'Idempotent, IdempotencyInterceptor, idempotencyOf, idempotencyProviders, idempotent, type AuthenticatedRequest, type NestIdempotencyOptions',
  readme: {
    mount:
      'Register the providers in your root module and mark each route with `@Idempotent(ACTIONS.name)`. Guards run\n   before interceptors, so their 401/403/429 are never stored; the tsconfig needs `experimentalDecorators`.',
    requestName: 'request',
    code: (view, principalLine) => {
      const first = view.actions.find((action) => action.http);
      const method = (first?.method ?? 'POST').charAt(0) + (first?.method ?? 'POST').slice(1).toLowerCase();
      const mark = first ? `\n// ${first.codeName} handler: @${method}() @Idempotent(ACTIONS.${first.codeName}) ${first.codeName}(@Body() body: ...) { ... }` : '';
      return `import { Module } from '@nestjs/common';
import { createIdempotency, createPool, idempotencyProviders, POLICY } from './idempotency/index.js';

const pool = createPool(process.env.DATABASE_URL!, POLICY);
const idempotency = createIdempotency({
  pool,
  ${principalLine}
});

@Module({ controllers: [/* yours */], providers: [...idempotencyProviders(idempotency)] })
export class AppModule {}${mark}`;
    },
    claimHint: 'in the handler, `idempotencyOf(request)` (from `@Req()`) holds the key, the claim `ref` and the lease `signal`',
  },
  tests: {
    imports: `import type { AddressInfo } from 'node:net';
import {
  Controller,
  HttpCode,
  Module,
  Req,
  RequestMapping,
  RequestMethod,
  Res,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Request, Response } from 'express';
import { Idempotent, idempotencyOf, idempotencyProviders } from './nestjs.js';`,
    serverDecl: 'let app: INestApplication;',
    setup: (action, method) => `    const idempotency = createIdempotency({ pool, principal: (request) => request.user?.id });
    // Stands in for the app's auth guard: guards run before the interceptor, so their refusals are never stored.
    class TestAuthGuard implements CanActivate {
      canActivate(context: ExecutionContext): boolean {
        const request = context.switchToHttp().getRequest<Request & { user?: { id: string } }>();
        const id = request.headers['x-test-principal'];
        if (typeof id === 'string') request.user = { id };
        return true;
      }
    }
    @Controller()
    @UseGuards(TestAuthGuard)
    class TestController {
      @RequestMapping({ path: ACTION.route, method: RequestMethod.${method.toUpperCase()} })
      @HttpCode(201)
      @Idempotent(ACTIONS.${action.codeName})
      async run(@Req() req: Request, @Res({ passthrough: true }) res: Response) {
        executions += 1;
        await recordEffect(idempotencyOf(req));
        await new Promise((resolve) => setTimeout(resolve, 30));
        if (failNext) {
          failNext = false;
          throw new Error('downstream failure');
        }
        res.location('/things/' + executions);
        return { execution: executions, at: Date.now() };
      }
    }
    @Module({ controllers: [TestController], providers: idempotencyProviders(idempotency) })
    class TestModule {}
    app = await NestFactory.create(TestModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    baseUrl = \`http://127.0.0.1:\${(app.getHttpServer().address() as AddressInfo).port}\`;`,
    teardown: '    await app?.close();',
  },
};
