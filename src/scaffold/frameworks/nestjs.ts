import type { HttpFramework } from '../httpFramework.js';

/**
 * NestJS: one global interceptor, routes marked with @Idempotent(ACTIONS.name). The interceptor runs on both HTTP
 * platforms; the suite runs on the project's (NESTJS_FASTIFY when it uses @nestjs/platform-fastify).
 */
export const NESTJS: HttpFramework = {
  module: 'nestjs',
  optionsType: 'NestIdempotencyOptions',
  exports:
    'Idempotent, IdempotencyInterceptor, idempotencyOf, idempotencyProviders, idempotent, type AuthenticatedRequest, type NestIdempotencyOptions',
  readme: {
    mount:
      'Register the providers in your root module and mark each route with `@Idempotent(ACTIONS.name)` (a GraphQL\n   resolver method under its `@Mutation()`: errors come back as GraphQL errors, a repeat gets the recorded result).\n   Guards run before interceptors, so their 401/403/429 are never stored; the tsconfig needs `experimentalDecorators`.',
    requestName: 'request',
    code: (view, principalLine, pool) => {
      const first = view.actions.find((action) => action.http);
      const method = (first?.method ?? 'POST').charAt(0) + (first?.method ?? 'POST').slice(1).toLowerCase();
      const mark = first ? `\n// ${first.codeName} handler: @${method}() @Idempotent(ACTIONS.${first.codeName}) ${first.codeName}(@Body() body: ...) { ... }` : '';
      return `import { Module } from '@nestjs/common';
import { createIdempotency, createPool, idempotencyProviders, POLICY } from './idempotency/index.js';

const pool = ${pool};
const idempotency = createIdempotency({
  pool,
  ${principalLine}
});

@Module({ controllers: [/* yours */], providers: [...idempotencyProviders(idempotency)] })
export class AppModule {}${mark}`;
    },
    claimHint: 'in the handler, `idempotencyOf(request)` (from `@Req()`) holds the key, the claim `ref` and the lease `signal`; a service it calls reads the same with `idempotencyOf()`',
  },
  tests: nestTests('express'),
  platforms: { fastify: () => NESTJS_FASTIFY },
};

/** The same adapter in a project on @nestjs/platform-fastify: the suite boots Nest on FastifyAdapter. */
export const NESTJS_FASTIFY: HttpFramework = { ...NESTJS, tests: nestTests('fastify'), platforms: {} };

function nestTests(platform: 'express' | 'fastify'): HttpFramework['tests'] {
  const express = platform === 'express';
  return {
    imports: `import { once } from 'node:events';
import type { AddressInfo, Server } from 'node:net';
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
${
  express
    ? "import type { Request, Response } from 'express';"
    : `import { FastifyAdapter } from '@nestjs/platform-fastify';
// The fastify that @nestjs/platform-fastify brings, typed structurally so the project need not declare it.
type FastifyRequest = { readonly headers: Record<string, string | string[] | undefined> };
type FastifyReply = { header(name: string, value: string): unknown };`
}
import { Idempotent, idempotencyOf, idempotencyProviders } from './nestjs.js';`,
    serverDecl: 'let app: INestApplication;',
    setup: (action, method) => `    const idempotency = createIdempotency({ pool, principal: (request) => request.user?.id });
    // Stands in for the app's auth guard: guards run before the interceptor, so their refusals are never stored.
    class TestAuthGuard implements CanActivate {
      canActivate(context: ExecutionContext): boolean {
        const request = context.switchToHttp().getRequest<${express ? 'Request' : 'FastifyRequest'} & { user?: { id: string } }>();
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
      async run(@Req() req: ${express ? 'Request' : 'FastifyRequest'}, @Res({ passthrough: true }) res: ${express ? 'Response' : 'FastifyReply'}) {
        executions += 1;
        await recordEffect(idempotencyOf(req));
        await new Promise((resolve) => setTimeout(resolve, 30));
        if (failNext) {
          failNext = false;
          throw new Error('downstream failure');
        }
        ${express ? "res.location('/things/' + executions)" : "res.header('location', '/things/' + executions)"};
        return { execution: executions, at: Date.now() };
      }
    }
    @Module({ controllers: [TestController], providers: idempotencyProviders(idempotency) })
    class TestModule {}
    app = await NestFactory.create(TestModule, ${express ? '' : 'new FastifyAdapter(), '}{ logger: false });
    await app.listen(0, '127.0.0.1');
    // Nest 7's listen() returns before the port is bound; 8 and later wait for it.
    const server: Server = app.getHttpServer();
    if (!server.listening) await once(server, 'listening');
    baseUrl = \`http://127.0.0.1:\${(server.address() as AddressInfo).port}\`;`,
    teardown: '    await app?.close();',
    // Nest's Express platform parses urlencoded bodies by default (qs: a repeated field is an array); Fastify's does not.
    forms: express,
  };
}
