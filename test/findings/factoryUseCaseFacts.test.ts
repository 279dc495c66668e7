import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { auditProject } from '../../src/findings/auditProject.js';
import { tempProjectSync } from '../helpers/tempProject.js';

// The shape of arthur-rosch/muve-api (a Fastify "clean architecture" app): a route plugin registers a handler
// imported by name, the handler gets its use case from a factory (`makeCreateLeadUseCase()` returning
// `new CreateLeadUseCase(repository)`), and the use case calls a service through an index's `export * from`.
const FILES: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'muve', dependencies: { fastify: '^5.0.0', stripe: '^17.0.0', '@prisma/client': '^5.0.0' } }),
  'tsconfig.json': JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { '@/*': ['src/*'] } } }),
  'src/http/routes.ts': "import type { FastifyInstance } from 'fastify'\nimport { create } from './create'\n\nexport async function leadsRoutes(app: FastifyInstance) {\n  app.post('/lead', create)\n}\n",
  'src/http/create.ts': "import type { FastifyReply, FastifyRequest } from 'fastify'\nimport { makeCreateLeadUseCase } from '@/factories/make-create-lead'\n\nexport async function create(request: FastifyRequest, reply: FastifyReply) {\n  const useCase = makeCreateLeadUseCase()\n  const { url } = await useCase.execute(request.body as { email: string })\n  return reply.status(201).send({ url })\n}\n",
  'src/factories/make-create-lead.ts': "import { CreateLeadUseCase } from '@/use-cases/create-lead'\nimport { PrismaLeadsRepository } from '@/repositories/prisma-leads'\n\nexport function makeCreateLeadUseCase() {\n  const repository = new PrismaLeadsRepository()\n  const useCase = new CreateLeadUseCase(repository)\n  return useCase\n}\n",
  'src/use-cases/create-lead.ts': "import { createStripeCheckout } from '@/services'\nimport type { PrismaLeadsRepository } from '@/repositories/prisma-leads'\n\nexport class CreateLeadUseCase {\n  constructor(private leads: PrismaLeadsRepository) {}\n\n  async execute({ email }: { email: string }) {\n    const lead = await this.leads.create(email)\n    return createStripeCheckout(lead.id, email)\n  }\n}\n",
  'src/repositories/prisma-leads.ts': "import { PrismaClient } from '@prisma/client'\nconst prisma = new PrismaClient()\n\nexport class PrismaLeadsRepository {\n  async create(email: string) {\n    return prisma.lead.create({ data: { email } })\n  }\n}\n",
  'src/services/index.ts': "export * from './send-email'\nexport * from './stripe/checkout-sessions'\n",
  'src/services/send-email.ts': 'export async function sendEmail(to: string) {\n  return to\n}\n',
  'src/services/stripe/checkout-sessions.ts': "import Stripe from 'stripe'\nconst stripe = new Stripe(process.env.STRIPE_KEY ?? '')\n\nexport const createStripeCheckout = async (leadId: string, email: string) => {\n  return stripe.checkout.sessions.create({ mode: 'subscription', customer_email: email, client_reference_id: leadId })\n}\n",
};
const CONFIG = {
  actions: [{ name: 'createLead', trigger: 'http', route: 'POST /lead', significantFields: ['email'], source: 'src/http/routes.ts:5' }],
  stack: { language: 'typescript', framework: 'fastify', database: 'postgres' },
  concurrency: 'multi-instance',
  retention: '24h',
  detectionLatency: '50ms',
};

describe('what a route does when its handler reaches its work through a factory and an index', () => {
  it('follows the registration inside the plugin, the factory-made use case and the re-export to the Stripe call', async () => {
    const dir = tempProjectSync(FILES, 'ib-factory-');
    const { actionFacts } = await auditProject(dir, { config: parseConfig(JSON.stringify(CONFIG)) });
    const [facts] = actionFacts;
    expect(facts?.handler).toMatchObject({ file: 'src/http/create.ts', name: 'create' });
    expect(facts?.calls.map((c) => `${c.provider}.${c.operation} ${c.file}:${c.line}`)).toEqual(['stripe.checkout.sessions.create src/services/stripe/checkout-sessions.ts:5']);
    expect(facts?.writes.map((w) => `${w.kind} ${w.target} ${w.file}`)).toEqual([expect.stringMatching(/lead src\/repositories\/prisma-leads\.ts$/)]);
  });
});
