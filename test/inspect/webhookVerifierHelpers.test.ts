import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';
import { tempProjectSync } from '../helpers/tempProject.js';

const project = (files: Record<string, string>) => tempProjectSync(files, 'ib-verifier-');

// The shape of Zukashi/e-commerce-food: a NestJS service with a helper that verifies a Stripe event and returns it
// (constructEventFromPayload), which nothing calls any more; the controller verifies the event itself.
const service = `import { Injectable } from '@nestjs/common';
import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_SECRET_KEY ?? '');

@Injectable()
export class StripeService {
  public async constructEventFromPayload(signature: string, payload: string) {
    return stripe.webhooks.constructEvent(payload, signature, process.env.STRIPE_WEBHOOK_SECRET ?? '');
  }
}
`;
const manifest = JSON.stringify({ name: 'shop', dependencies: { '@nestjs/common': '^10.0.0', '@nestjs/core': '^10.0.0', stripe: '^14.0.0' } });

describe('a helper that verifies a webhook event and returns it', () => {
  it('is not a webhook of its own when nothing in the project calls it', async () => {
    const root = project({ 'package.json': manifest, 'src/stripe/stripe.service.ts': service });
    const { findings } = await inspectProject(root);
    expect(findings.filter((f) => f.kind === 'webhook')).toEqual([]);
  });

  it('is the route that calls it', async () => {
    const root = project({
      'package.json': manifest,
      'src/stripe/stripe.service.ts': service,
      'src/stripe/stripe.controller.ts': `import { Controller, Headers, Post, Req } from '@nestjs/common';
import { StripeService } from './stripe.service';

@Controller('stripe')
export class StripeController {
  constructor(private readonly stripeService: StripeService) {}

  @Post('webhook')
  async receive(@Headers('stripe-signature') signature: string, @Req() req: { rawBody: Buffer }) {
    const event = await this.stripeService.constructEventFromPayload(signature, req.rawBody.toString());
    return { received: event.id };
  }
}
`,
    });
    const webhooks = (await inspectProject(root)).findings.filter((f) => f.kind === 'webhook');
    expect(webhooks.map((w) => [w.file, 'route' in w ? w.route : undefined])).toEqual([['src/stripe/stripe.controller.ts', 'POST /stripe/webhook']]);
  });

  it('is still reported where it verifies when a caller outside any route uses it', async () => {
    const root = project({
      'package.json': manifest,
      'src/stripe/stripe.service.ts': service,
      'src/lambda.ts': `import { StripeService } from './stripe/stripe.service';
const service = new StripeService();
export const handler = async (event: { headers: Record<string, string>; body: string }) => {
  const verified = await service.constructEventFromPayload(event.headers['stripe-signature'] ?? '', event.body);
  return { statusCode: 200, body: verified.id };
};
`,
    });
    const webhooks = (await inspectProject(root)).findings.filter((f) => f.kind === 'webhook');
    expect(webhooks).toHaveLength(1);
  });
});
