import express, { type Request, type RequestHandler, type Response } from 'express';
import type { WebhookResponse } from './webhooks.js';
import type { WebhookRequest } from './verify.js';

/**
 * Express wiring: the raw body parser (signatures cover the exact bytes, so this route must not go through
 * express.json()) followed by the processor. Mount before any global JSON parser, or on its own router:
 * `app.post('/webhooks/stripe', ...expressWebhook(processStripe))`.
 */
export function expressWebhook(
  process: (request: WebhookRequest) => Promise<WebhookResponse>,
  limit = '1mb',
): RequestHandler[] {
  const handler: RequestHandler = (req: Request, res: Response, next) => {
    const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    process({ rawBody, headers: req.headers }).then((answer) => {
      res.status(answer.status).set(answer.headers).send(answer.body);
    }, next);
  };
  return [express.raw({ type: () => true, limit }), handler];
}
