import type { RawBodyRequest } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { WebhookResponse } from './webhooks.js';
import type { WebhookRequest } from './verify.js';

/**
 * NestJS wiring (Express platform) for a webhook route: the processor gets the exact bytes the provider signed,
 * which Nest keeps only when the app is created with `NestFactory.create(AppModule, { rawBody: true })`. Use the
 * route's own response (`@Res()`), so no interceptor or serializer touches the body:
 *
 *   @Post('webhooks/stripe')
 *   stripe(@Req() req: RawBodyRequest<Request>, @Res() res: Response) {
 *     return nestWebhook(req, res, processStripe);
 *   }
 *
 * Do not put `@Idempotent()` on this route: the processor is its idempotency (keyed by the provider's event id).
 */
export async function nestWebhook(
  request: RawBodyRequest<Request>,
  response: Response,
  process: (request: WebhookRequest) => Promise<WebhookResponse>,
): Promise<void> {
  const rawBody = request.rawBody;
  if (!Buffer.isBuffer(rawBody)) {
    // Without the raw body no signature can be checked: refuse, and say how to fix it (the provider resends).
    response.status(500).json({
      error: 'raw-body-missing',
      detail: 'create the Nest app with NestFactory.create(AppModule, { rawBody: true })',
    });
    return;
  }
  const answer = await process({ rawBody, headers: request.headers });
  response.status(answer.status).set(answer.headers).send(answer.body);
}
