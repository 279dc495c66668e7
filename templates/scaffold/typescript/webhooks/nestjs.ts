import type { WebhookResponse } from './webhooks.js';
import type { WebhookRequest } from './verify.js';

/** The route's request as `rawBody: true` leaves it, on Nest's Express and Fastify platforms alike. */
export interface NestWebhookRequest {
  readonly rawBody?: Buffer;
  readonly headers: WebhookRequest['headers'];
}

/** The route's own response: express.Response (setHeader) or FastifyReply (header); both have status and send. */
export interface NestWebhookReply {
  status(code: number): unknown;
  send(body: unknown): unknown;
  setHeader?(name: string, value: string): unknown;
  header?(name: string, value: string): unknown;
}

/**
 * NestJS wiring (Express or Fastify platform) for a webhook route: the processor gets the exact bytes the provider
 * signed, which Nest keeps only when the app is created with `rawBody: true` in NestFactory.create's options. Use
 * the route's own response (`@Res()`), so no interceptor or serializer touches the body:
 *
 *   @Post('webhooks/stripe')
 *   stripe(@Req() req: RawBodyRequest<Request>, @Res() res: Response) {
 *     return nestWebhook(req, res, processStripe);
 *   }
 *
 * Do not put `@Idempotent()` on this route: the processor is its idempotency (keyed by the provider's event id).
 */
export async function nestWebhook(
  request: NestWebhookRequest,
  response: NestWebhookReply,
  process: (request: WebhookRequest) => Promise<WebhookResponse>,
): Promise<void> {
  const rawBody = request.rawBody;
  if (!Buffer.isBuffer(rawBody)) {
    // Without the raw body no signature can be checked: refuse, and say how to fix it (the provider resends).
    reply(
      response,
      500,
      { 'content-type': 'application/json; charset=utf-8' },
      JSON.stringify({
        error: 'raw-body-missing',
        detail: 'create the Nest app with rawBody: true in the options of NestFactory.create',
      }),
    );
    return;
  }
  const answer = await process({ rawBody, headers: request.headers });
  reply(response, answer.status, answer.headers, answer.body);
}

function reply(
  response: NestWebhookReply,
  status: number,
  headers: WebhookResponse['headers'],
  body: unknown,
): void {
  response.status(status);
  for (const [name, value] of Object.entries(headers)) {
    if (response.setHeader) response.setHeader(name, value);
    else response.header?.(name, value);
  }
  response.send(body);
}
