import type { WebhookResponse } from './webhooks.js';
import type { WebhookRequest } from './verify.js';

/**
 * Next.js App Router wiring for a webhook route handler: the processor gets the exact bytes the provider signed
 * (read with `request.arrayBuffer()`, never `request.json()`, which would re-serialise them) and its answer is
 * the route's response. In `app/api/webhooks/stripe/route.ts`:
 *
 *   export const POST = nextWebhook(processStripe);
 *   export const runtime = 'nodejs'; // the processor needs node:crypto and the database pool, not the Edge runtime
 *
 * Do not wrap this route with withIdempotency(): the processor is its idempotency (keyed by the provider's event id).
 * A body over `bodyLimit` bytes is refused with 413 before the processor runs.
 */
export function nextWebhook(
  process: (request: WebhookRequest) => Promise<WebhookResponse>,
  bodyLimit = 1_048_576,
): (request: Request) => Promise<Response> {
  return async function POST(request) {
    const declared = Number(request.headers.get('content-length') ?? '0');
    if (declared > bodyLimit) return tooLarge();
    const rawBody = Buffer.from(await request.arrayBuffer());
    if (rawBody.length > bodyLimit) return tooLarge();
    // Header names arrive in lower case from the Web Headers object, as the processor expects them.
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const answer = await process({ rawBody, headers });
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  };
}

function tooLarge(): Response {
  return new Response(JSON.stringify({ error: 'body-too-large' }), {
    status: 413,
    headers: { 'content-type': 'application/json' },
  });
}
