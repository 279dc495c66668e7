import type { FastifyInstance } from 'fastify';
import type { WebhookResponse } from './webhooks.js';
import type { WebhookRequest } from './verify.js';

/**
 * Fastify wiring: registers the route in its own encapsulated context whose content-type parser keeps the raw
 * bytes (signatures cover them exactly), so the rest of the app keeps Fastify's JSON parsing.
 * `await app.register(fastifyWebhook('/webhooks/stripe', processStripe))`.
 */
export function fastifyWebhook(
  url: string,
  process: (request: WebhookRequest) => Promise<WebhookResponse>,
  bodyLimit = 1_048_576,
) {
  return async function webhookPlugin(app: FastifyInstance): Promise<void> {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) =>
      done(null, body),
    );
    app.post(url, async (request, reply) => {
      const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const answer = await process({ rawBody, headers: request.headers });
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    });
  };
}
