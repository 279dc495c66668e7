// NestJS app on the generated interceptor, wired as the generated README shows. Plain JavaScript has no decorator
// syntax, so the decorators are applied as the compiler would apply them.
import 'reflect-metadata';
import { Body, Controller, Module, Post, Req } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { announce, pay, principal, scaffold, storePool } from './paymentAction.mjs';

const idempotency = scaffold.createIdempotency({ pool: storePool, principal: (request) => principal(request.headers) });

class PaymentsController {
  async createPayment(request, body) {
    const context = scaffold.idempotencyOf(request);
    return pay({ context, pause: request.headers['x-fault-pause'], body });
  }
}
const proto = PaymentsController.prototype;
const descriptor = Object.getOwnPropertyDescriptor(proto, 'createPayment');
for (const decorator of [scaffold.Idempotent(scaffold.ACTIONS.createPayment), Post('payments')]) decorator(proto, 'createPayment', descriptor);
Object.defineProperty(proto, 'createPayment', descriptor);
Req()(proto, 'createPayment', 0);
Body()(proto, 'createPayment', 1);
Controller()(PaymentsController);

class AppModule {}
Module({ controllers: [PaymentsController], providers: scaffold.idempotencyProviders(idempotency) })(AppModule);
const app = await NestFactory.create(AppModule, { logger: ['error'] });
await app.listen(0, '127.0.0.1');
announce(app.getHttpServer().address().port);
