import { BROKER_LABELS, isPagesApiFile } from '../../model/labels.js';
import type { DesignModel } from '../../model/types.js';
import { deliveringBroker } from '../../model/workerOutcomes.js';
import { printSnippet } from '../javascript/printModule.js';
import type { ModuleType } from '../javascript/transpile.js';
import { quote } from '../tsLiteral.js';
import { brokerAdapters, consumerAdapter, planTriggers, type BrokerAdapter, type TriggerPlan } from './index.js';
import { RECONCILE_MIN_STUCK_MS, RECONCILE_SCHEDULE } from './renderReconcileJob.js';

const list = (names: readonly string[]) => names.map((name) => `\`${name}\``).join(', ');

/**
 * TRIGGERS.md: how webhooks, consumers, scheduled jobs and reconciliation are wired, for the triggers the design has.
 * With `javascript`, for a JavaScript project in that module format: examples without types, .js file names.
 */
export function renderTriggersReadme(model: DesignModel, plan: TriggerPlan, javascript?: ModuleType): string {
  const block = (code: string) => (javascript ? `\`\`\`js\n${printSnippet(code, javascript)}\`\`\`` : `\`\`\`ts\n${code}\`\`\``);
  const bang = javascript ? '' : '!';
  const parts: string[] = [
    `# Webhooks, consumers, scheduled jobs

${model.stack.worker ? 'The core and store of this scaffold' : model.stack.plain ? 'The same core and store as the idempotent(fn) wrapper' : 'The same core and store as the HTTP middleware'} (claim, lease, fencing token, stored outcome), keyed by what each
trigger really carries: the provider's event id, the message id, or the job name and its scheduled slot. Never by
an Idempotency-Key header: providers, brokers and schedulers do not send one. \`idempotency\` below is what
\`createIdempotency()\` from index.ts returns; everything else is exported by the files named below (webhooks/,
consumers/, cron/, reconcile/ in this folder).`,
  ];
  if (plan.webhooks.length > 0) {
    // The example is a provider's webhook where there is one; a sender the tool does not know gets the generic source.
    const hook = plan.webhooks.find((w) => w.provider === 'stripe' || w.provider === 'adyen' || w.provider === 'paypal') ?? plan.webhooks[0]!;
    const provider =
      hook.provider === 'adyen'
        ? `adyenSource(process.env.ADYEN_HMAC_KEY${bang})`
        : hook.provider === 'paypal'
          ? 'paypalSource(verifyWithPayPal)'
          : hook.provider === 'stripe'
            ? `stripeSource(process.env.STRIPE_WEBHOOK_SECRET${bang})`
            : `genericHmacSource({
    provider: ${quote(hook.codeName)},
    secret: process.env.WEBHOOK_SECRET${bang},
    signatureHeader: 'x-signature', // the header your sender puts the HMAC-SHA256 of the raw body in
    eventId: { path: ${quote(hook.key.from?.[0] ?? 'id')} }, // where it puts the delivery's id: a body path, or { header: '…' }
  })`;
    const pagesRoute = isPagesApiFile(hook.source);
    const handles =
      hook.provider === 'stripe'
        ? "  handles: (type) => type.startsWith('payment_intent.'), // others: 2xx, no record\n"
        : hook.provider === 'adyen'
          ? "  handles: (type) => type === 'AUTHORISATION', // others: 2xx, no record\n"
          : hook.provider === 'paypal'
            ? "  handles: (type) => type.startsWith('PAYMENT.CAPTURE.'), // others: 2xx, no record\n"
            : '';
    const route = quote(hook.path ?? `/webhooks/${hook.provider ?? 'provider'}`);
    const mount =
      plan.webFramework === 'express'
        ? `app.post(${route}, ...expressWebhook(process${upper(hook.codeName)}));`
        : plan.webFramework === 'fastify'
          ? `await app.register(fastifyWebhook(${route}, process${upper(hook.codeName)}));`
          : plan.webFramework === 'nestjs' && plan.httpPlatform === 'fastify'
            ? `// main.ts: NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), { rawBody: true });
// the signature needs the exact bytes. In a controller (no @Idempotent() here: the processor is this route's
// idempotency), with FastifyReply and FastifyRequest imported as types from 'fastify':
@Post(${route})
receive(@Req() req: RawBodyRequest<FastifyRequest>, @Res() res: FastifyReply) {
  return nestWebhook(req, res, process${upper(hook.codeName)});
}`
          : plan.webFramework === 'nestjs'
            ? `// main.ts: NestFactory.create(AppModule, { rawBody: true }); the signature needs the exact bytes.
// In a controller (no @Idempotent() here: the processor is this route's idempotency):
@Post(${route})
receive(@Req() req: RawBodyRequest<Request>, @Res() res: Response) {
  return nestWebhook(req, res, process${upper(hook.codeName)});
}`
            : plan.webFramework === 'next' && pagesRoute
              ? `// ${route} is a Pages API route: turn its body parser off (export const config = { api: { bodyParser: false } }),
// read the raw body from the request stream, call process${upper(hook.codeName)}({ rawBody, headers: req.headers }) and send
// the { status, headers, body } it answers. No withPagesIdempotency() there: the processor is this route's idempotency.`
            : plan.webFramework === 'next'
              ? `// The App Router route.ts serving ${route} (no withIdempotency() here: the processor is this route's idempotency):
export const POST = nextWebhook(process${upper(hook.codeName)});
export const runtime = 'nodejs';`
              : `// Pass the raw body and headers: process${upper(hook.codeName)}({ rawBody, headers }) answers { status, headers, body }.`;
    parts.push(`## Webhooks (${list(plan.webhooks.map((action) => action.codeName))})

1. ${plan.store.orderingTable ? 'Apply `migrations/002_webhook_object_versions.sql` after 001 if you use out-of-order protection.' : `Out-of-order protection is an \`OrderingGuard\` (webhooks/webhooks.ts) you give the processor; the ${plan.store.label} scaffold ships none (the PostgreSQL one is a table with a conditional upsert).`}
   The processor below is the webhook's only entry point (index.ts has no HTTP middleware for it): an
   Idempotency-Key middleware would key on a header the provider never sends and could not check the signature on
   the raw body.
2. Build one processor per endpoint and mount it on a route that keeps the raw body:

${block(`const process${upper(hook.codeName)} = createWebhookProcessor({
  core: idempotency.core,
  action: ACTIONS.${hook.codeName},
  source: ${provider},
${handles}${plan.store.orderingTable ? '  ordering: new PgOrderingGuard(pool), // optional: older events for an object are acknowledged, not applied' : '  // ordering: yourOrderingGuard, // optional: older events for an object are acknowledged, not applied'}
  events: createWebhookMetrics(), // idempotency_webhook_events_total{action,provider,outcome}
  handle: async (event, context) => applyEvent(event, context.db ?? pool),
});
${mount}
`)}

- The signature is checked first, on the raw body (Stripe: \`t=\`/\`v1=\` HMAC-SHA256 with a 300 s tolerance, the check
  \`stripe.webhooks.constructEvent\` does; Adyen: the item HMAC; PayPal: your verifier; GitHub: \`X-Hub-Signature-256\`;
  \`genericHmacSource\` for a header or JSON path). A bad signature is 400 and touches nothing.
- Key: \`provider:eventId\` (Stripe \`event.id\`, Adyen \`pspReference:eventCode:success\`, PayPal event id, GitHub
  \`X-GitHub-Delivery\`). A resend of a finished event gets 200 without running; a concurrent duplicate waits for
  the first delivery (up to the action's lease) and then gets 200 too, or 409 if it is still running, so the
  provider resends. A failing handler gets 500 and the provider resends; event types you do not handle get 200.
- A route that checks the signature itself (\`stripe.webhooks.constructEvent\`, Adyen's \`validateHMAC\`,
  a PayPal verify-webhook-signature call) keeps its check and dedupes the verified event by the same key:
  \`stripeEventOf(event)\`, \`adyenEventOf(item)\` and \`paypalEventOf(event, transmissionId)\` from
  webhooks/verify.ts give its \`{ id, type }\`.
- Out of order: with \`ordering\`, an event older (by its creation time) than the newest one applied for the same
  object is acknowledged without running \`handle\`; equal times both apply.`);
  }
  if (plan.consumers.length > 0) {
    const code = consumerWiring(plan.consumers, model.stack.broker, { producers: true, javascript: javascript !== undefined });
    parts.push(`## Queue consumers (${list(plan.consumers.map((item) => item.codeName))})

${block(`${code}
`)}

- Key: the message id the producer set (or a business key you pass as \`messageIdOf\`), never a delivery tag or
  attempt counter. The message is acknowledged only after its record is COMPLETED; a consumer that dies mid-handler
  never acked, the broker redelivers, and the store turns the redelivery into a no-op (or a single re-run, if the
  first attempt never finished).
- Metrics: pass \`events: createConsumerMetrics()\` (consumers/metrics.ts): \`idempotency_consumer_messages_total{action,outcome}\`,
  \`idempotency_consumer_redeliveries_total\` and \`idempotency_consumer_dead_lettered_total\` (alerted in idempotency-alerts.yml).
- Poison messages: after \`maxAttempts\` failures the record is marked FAILED (redeliveries are then acknowledged
  without running) and the message goes to the dead letter (RabbitMQ: the dead-letter exchange; BullMQ and Bull: the
  failed set; JetStream: \`term()\`; Kafka: the offset moves past it; SQS: the dead-letter queue, then deleted).`);
  }
  if (plan.crons.length > 0) {
    const action = plan.crons[0]!;
    parts.push(`## Scheduled jobs (${list(plan.crons.map((item) => item.codeName))})

${block(`const guard = new CronGuard({ core: idempotency.core, events: createCronMetrics() });
cron.schedule('*/5 * * * *', nodeCronTask(guard, ACTIONS.${action.codeName}, '${action.codeName}', 5 * 60_000, work)); // node-cron
schedule.scheduleJob(rule, nodeScheduleTask(guard, ACTIONS.${action.codeName}, '${action.codeName}', work)); // node-schedule: the fire date is the slot
setInterval(intervalTask(guard, ACTIONS.${action.codeName}, '${action.codeName}', PERIOD_MS, work), PERIOD_MS); // setInterval: a failed run goes to onError
`)}

- Key: job name + scheduled slot (\`floor((fire time + tolerance) / interval)\`, or node-schedule's fire date), so every
  instance that fires the same slot computes the same key; one runs it, the others get \`duplicate\` or \`overlap\`.
- Batches: inside \`work(context, slot)\`, wrap each item in \`guard.runItem(ACTIONS.${action.codeName}, context, itemId, doItem)\`;
  items commit one by one, so a slot re-run after a crash skips the items already done.
- \`cronOnTick\` (cron), \`vercelCronRoute\` (checks \`Authorization: Bearer $CRON_SECRET\`) and a direct
  \`guard.runInterval()\` call from a NestJS \`@Cron()\` method work the same way.
- Metrics: \`idempotency_cron_slots_total{job,outcome}\` and \`idempotency_cron_missed_slots_total{job,reason}\`, where a
  previous slot with no record (while the one before it ran) is \`missed\` and one left PROCESSING past its lease is \`crashed\`;
  idempotency-alerts.yml fires \`IdempotencyCronSlotMissed\` on either.`);
  }
  if (plan.reconciled.length > 0) {
    parts.push(`## Reconciliation job (${list(plan.reconciled.map((item) => item.codeName))})

\`DATABASE_URL=... STRIPE_SECRET_KEY=... node reconcile/job.js [--dry-run]\` on the schedule \`${RECONCILE_SCHEDULE}\`.
It lists records still PROCESSING at least ${RECONCILE_MIN_STUCK_MS / 1000} s after their lease lapsed (a crashed worker, or a completion that could
not be recorded: "outcome unknown"), asks the provider by the key we derived for the record (Stripe: Search API on
\`metadata['idempotency_key_hash']\`, set by \`stripeMetadata(context)\` on every create; Adyen: the merchant
reference; PayPal: the PayPal-Request-Id), then takes the record over with a fresh fencing token and completes it
with the provider's result, or releases it when the provider has nothing, so the client's retry runs once with
the same provider key. It only reads from the provider, so it cannot charge. \`--dry-run\` reports and writes nothing.${model.providers.some((provider) => provider.id === 'adyen' || provider.id === 'paypal') ? '\nAdyen and PayPal lookups need a finder over your data (see reconcile/job.ts); until you fill it in, their records are reported as `left`.' : ''}`);
  }
  const reconcilable = planTriggers(model, 'express', 'postgres').reconciled;
  if (!plan.store.listStuck && reconcilable.length > 0) {
    parts.push(`## Reconciliation job: not generated for ${plan.store.label}

The job finds records stuck PROCESSING through \`IdempotencyStore.listStuck\`, which the ${plan.store.label} store does not
implement, so none was generated for ${list(reconcilable.map((item) => item.codeName))}. A record left PROCESSING is
still recovered when the client retries (the lease lapses, the retry reclaims it and calls the provider again with the
same derived key); one nobody retries raises the stuck-record alert and is settled by hand (the runbook in the design
document). Implementing \`listStuck\` on the store enables \`reconcileStuck()\` from a PostgreSQL scaffold unchanged.`);
  }
  if (!plan.store.suites) {
    parts.push(`## Tests on ${plan.store.label}

The webhook, consumer and scheduled-job suites shipped with the PostgreSQL scaffold create their tables in a
PostgreSQL schema, so they are not part of this one; the processors above are the same code over the
IdempotencyStore interface, and \`idempotency.test.ts\` and \`store-contract.test.ts\` exercise this store.`);
  }
  const text = `${parts.join('\n\n')}\n`;
  // The JavaScript files' names wherever the text names a .ts file, as the old path renamed them.
  return javascript ? text.replace(/\b([\w.-]+)\.ts\b/g, '$1.js') : text;
}

/**
 * How each adapter in consumers/ is wired: what it needs first, the producer's side (a stable message id) and the
 * consumer wrapper around the user's `handle` (`wrapper`: what the consumer side imports from consumers/<adapter>.ts).
 */
const ADAPTER_WIRING: Record<BrokerAdapter, { label: string; wrapper: string; setup?: string; producer?: (name: string) => string; consumer: (name: string, javascript: boolean) => string }> = {
  bullmq: {
    label: 'BullMQ',
    wrapper: 'bullmqProcessor',
    producer: (name) => `// Producer: the same work gets the same jobId.
await queue.add('${name}', data, { jobId: jobIdFor(ACTIONS.${name}, { orderId: data.orderId }), attempts: 5 });`,
    consumer: (name) => `// Worker: a job re-run after a stalled worker, or re-added after removal, finds its record and returns.
new Worker(queueName, bullmqProcessor({ core: idempotency.core, action: ACTIONS.${name}, handle }), { connection });`,
  },
  bull: {
    label: 'Bull',
    wrapper: 'bullProcessor',
    producer: (name) => `// Producer: the same work gets the same jobId.
await queue.add('${name}', data, { jobId: jobIdFor(ACTIONS.${name}, { orderId: data.orderId }), attempts: 5 });`,
    consumer: (name) => `// Worker (or a NestJS @Process method that calls it): a job re-run after a stalled worker, or re-added after removal, finds its record and returns.
queue.process('${name}', bullProcessor({ core: idempotency.core, action: ACTIONS.${name}, handle }));`,
  },
  amqplib: {
    label: 'RabbitMQ (amqplib)',
    wrapper: 'consumeIdempotently',
    setup: 'const channel = await connection.createConfirmChannel();',
    producer: () => "await publishWithId(channel, 'queue-name', body, messageId); // producer: a stable messageId per intent",
    consumer: (name) => `await consumeIdempotently(channel, { core: idempotency.core, action: ACTIONS.${name}, queue: 'queue-name', deadLetterExchange: 'dlx', handle });`,
  },
  nats: {
    label: 'NATS JetStream',
    wrapper: 'natsHandler',
    producer: () => "await publishWithId(js, 'subject', data, messageId); // Nats-Msg-Id: JetStream drops repeats within its window",
    // (The loop body goes on its own line in JavaScript, where the old path's compiler put it.)
    consumer: (name, javascript) => `const handle${upper(name)} = natsHandler({ core: idempotency.core, action: ACTIONS.${name}, handle });
for await (const message of await jsConsumer.consume())${javascript ? '\n  ' : ' '}await handle${upper(name)}(message);`,
  },
  kafka: {
    label: 'Kafka (kafkajs)',
    wrapper: 'kafkaEachMessage',
    setup: 'const consumer = kafka.consumer({ groupId });',
    consumer: (name) => `await consumer.run({ autoCommit: false, eachMessage: kafkaEachMessage(consumer, { core: idempotency.core, action: ACTIONS.${name}, handle }) });`,
  },
  sqs: {
    label: 'Amazon SQS',
    wrapper: 'pollIdempotently',
    // Keyed by the SQS MessageId (as the document says) unless the producer sets an id of its own.
    producer: () => 'await sendWithId(sqs, queueUrl, body, messageId); // a producer that retries: its own id, read with messageIdOf: messageIdOfAttribute',
    consumer: (name) => `void pollIdempotently(sqs, { core: idempotency.core, action: ACTIONS.${name}, queueUrl, deadLetterQueueUrl, handle, signal });`,
  },
};

/**
 * The consumers' wiring: for each adapter the design's brokers have (the first consumer delivered by it names the
 * action), and the generic idempotentHandler for consumers whose broker has none. `producers` adds the producer's
 * side (TRIGGERS.md); a worker's README shows the consumer side only.
 */
export function consumerWiring(
  consumers: ReadonlyArray<{ codeName: string; broker?: string | undefined }>,
  stackBroker: string,
  options: { producers: boolean; javascript: boolean },
): string {
  const parts = consumerParts(consumers, stackBroker);
  return parts
    .map(({ adapter, name }) => {
      // Several brokers: each part says whose it is (the names in it, such as `channel`, are that client's).
      const title = parts.length === 1 ? [] : [`// ${adapter === undefined ? unadaptedTitle(consumers, stackBroker) : ADAPTER_WIRING[adapter].label}`];
      if (adapter === undefined) {
        return [
          ...title,
          `const onMessage = idempotentHandler({ core: idempotency.core, action: ACTIONS.${name}, messageIdOf: (m) => m.id, handle });
const outcome = await onMessage(message); // ack on 'done' | 'duplicate' | 'dead'; redeliver on 'busy' or a throw`,
        ].join('\n');
      }
      const wiring = ADAPTER_WIRING[adapter];
      return [...title, wiring.setup, options.producers ? wiring.producer?.(name) : undefined, wiring.consumer(name, options.javascript)].filter((line) => line !== undefined).join('\n');
    })
    .join('\n\n');
}

/** "Amazon SQS (no adapter here): the generic handler", naming the brokers the design knows among those without one. */
function unadaptedTitle(consumers: ReadonlyArray<{ broker?: string | undefined }>, stackBroker: string): string {
  const brokers = [...new Set(consumers.filter((action) => consumerAdapter(action, stackBroker) === undefined).map((action) => deliveringBroker(action, stackBroker)))]
    .filter((broker) => broker !== 'none' && broker !== 'unknown')
    .sort()
    .map((broker) => BROKER_LABELS[broker] ?? broker);
  return `${brokers.length > 0 ? `${brokers.join(', ')} (no adapter here)` : 'Any other broker'}: the generic handler, acknowledging on its outcome`;
}

/** The modules (relative to the scaffold) and wrappers consumerWiring's consumer side calls, for a README's imports. */
export function consumerImports(consumers: ReadonlyArray<{ codeName: string; broker?: string | undefined }>, stackBroker: string): Array<{ module: string; name: string }> {
  return consumerParts(consumers, stackBroker).map(({ adapter }) => (adapter === undefined ? { module: 'consumers/handler.js', name: 'idempotentHandler' } : { module: `consumers/${adapter}.js`, name: ADAPTER_WIRING[adapter].wrapper }));
}

/** One part per adapter the consumers' brokers have (in the plan's order), then one for those on a broker without one. */
function consumerParts(consumers: ReadonlyArray<{ codeName: string; broker?: string | undefined }>, stackBroker: string): Array<{ adapter: BrokerAdapter | undefined; name: string }> {
  const parts: Array<{ adapter: BrokerAdapter | undefined; name: string }> = brokerAdapters(consumers, stackBroker).map((adapter) => ({
    adapter,
    name: consumers.find((action) => consumerAdapter(action, stackBroker) === adapter)!.codeName,
  }));
  const unadapted = consumers.find((action) => consumerAdapter(action, stackBroker) === undefined);
  if (unadapted) parts.push({ adapter: undefined, name: unadapted.codeName });
  return parts;
}

function upper(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
