import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileContext } from '../../src/findings/providerCalls.js';
import { eventIdDedupe, messageDedupe } from '../../src/inspect/detectors/dedupeEvidence.js';
import { emptyFacts } from '../../src/inspect/detectors/detectorTypes.js';
import { existingIdempotency } from '../../src/inspect/detectors/existingIdempotency.js';
import { formatInspection } from '../../src/inspect/formatInspection.js';
import { inspectProject } from '../../src/inspect/index.js';
import type { WebhookFinding } from '../../src/inspect/types.js';
import { contextFor } from '../findings/ruleTester.js';

/** A webhook handler whose body is `body`, starting on line 10 of src/webhooks/stripe.ts. */
const webhook = (body: string) => ({ file: 'src/webhooks/stripe.ts', line: 10, text: `async function handle(event: Stripe.Event) {\n${body}\n  await fulfil(event.data.object);\n}` });
const consumer = (body: string) => ({ file: 'src/worker.ts', line: 3, text: `async (job) => {\n${body}\n  await ship(job.data);\n}` });

/** Where the search credits dedupe, or which claim it refused and why. */
function scan(piece: { file: string; line: number; text: string }, by = eventIdDedupe): string {
  const { evidence, perAttemptClaim } = by([piece]);
  if (evidence) return `evidence ${evidence.file}:${evidence.line}`;
  return perAttemptClaim ? `refused ${perAttemptClaim.claim} at ${perAttemptClaim.file}:${perAttemptClaim.line} keyed on ${perAttemptClaim.value}` : 'none';
}

describe('a claim keyed on a value made fresh per attempt is not dedupe evidence', () => {
  it('ON CONFLICT without a target: counted while a stable value is among the values', () => {
    expect(scan(webhook("  await db.query('INSERT INTO processed_events (id, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [randomUUID(), event.id]);"))).toBe('evidence src/webhooks/stripe.ts:11');
    // Every value fresh: no unique column can ever see the same row twice.
    expect(scan(webhook("  console.info(event.id);\n  await db.query('INSERT INTO processed_events (id, received_at) VALUES ($1, $2) ON CONFLICT DO NOTHING', [randomUUID(), new Date()]);"))).toBe(
      'refused ON CONFLICT at src/webhooks/stripe.ts:12 keyed on randomUUID()',
    );
  });

  it('ON CONFLICT (id) where id is the fresh value is refused; ON CONFLICT (event_id) on event.id is evidence', () => {
    expect(scan(webhook("  await db.query('INSERT INTO processed_events (id, event_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [crypto.randomUUID(), event.id]);"))).toBe(
      'refused ON CONFLICT at src/webhooks/stripe.ts:11 keyed on crypto.randomUUID()',
    );
    expect(scan(webhook("  await db.query('INSERT INTO processed_events (id, event_id) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING', [randomUUID(), event.id]);"))).toBe('evidence src/webhooks/stripe.ts:11');
    // MySQL placeholders map by order.
    expect(scan(webhook("  await db.execute('INSERT INTO processed_events (event_id, id) VALUES (?, ?) ON CONFLICT (id) DO NOTHING', [event.id, uuidv4()]);"))).toBe(
      'refused ON CONFLICT at src/webhooks/stripe.ts:11 keyed on uuidv4()',
    );
  });

  it('through a const of the same function, across a multi-line statement', () => {
    const body = [
      '  const rowId = nanoid();',
      '  await pool.query(',
      '    `INSERT INTO processed_events (id, event_id)',
      '     VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`,',
      '    [rowId, event.id],',
      '  );',
    ].join('\n');
    expect(scan(webhook(body))).toBe('refused ON CONFLICT at src/webhooks/stripe.ts:14 keyed on nanoid()');
  });

  it('a key the code does not map stays evidence: no alarm on a guess', () => {
    // Conflict on a column the insert does not list (its value is a database default), and a params array built elsewhere.
    expect(scan(webhook("  await db.query('INSERT INTO processed_events (event_id) VALUES ($1) ON CONFLICT (id) DO NOTHING', [event.id]);"))).toBe('evidence src/webhooks/stripe.ts:11');
    expect(scan(webhook("  await db.query('INSERT INTO processed_events (id, event_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', params(event.id));"))).toBe('evidence src/webhooks/stripe.ts:11');
    expect(scan(webhook("  await db.query('INSERT INTO processed_events (id, event_id) VALUES ($1, $2) ON CONFLICT ON CONSTRAINT uq DO NOTHING', [randomUUID(), event.id]);"))).toBe('evidence src/webhooks/stripe.ts:11');
  });

  it('a module-level const is made once per process, not per attempt', () => {
    const piece = { file: 'src/webhooks/stripe.ts', line: 1, text: "const RUN = randomUUID();\nasync function handle(event) {\n  await db.query('INSERT INTO seen (run, event_id) VALUES ($1, $2) ON CONFLICT (run) DO NOTHING', [RUN, event.id]);\n}" };
    expect(scan(piece)).toBe('evidence src/webhooks/stripe.ts:3');
  });

  it('SQL functions in VALUES and tagged templates', () => {
    expect(scan(webhook("  await db.query('INSERT INTO processed_events (id, event_id) VALUES (gen_random_uuid(), $1) ON CONFLICT (id) DO NOTHING', [event.id]);"))).toBe(
      'refused ON CONFLICT at src/webhooks/stripe.ts:11 keyed on gen_random_uuid()',
    );
    expect(scan(webhook('  await prisma.$executeRaw`INSERT INTO processed_events (id, event_id) VALUES (${ulid()}, ${event.id}) ON CONFLICT (id) DO NOTHING`;'))).toBe(
      'refused ON CONFLICT at src/webhooks/stripe.ts:11 keyed on ulid()',
    );
    expect(scan(webhook('  await sql`INSERT INTO processed_events (id, event_id) VALUES (${ulid()}, ${event.id}) ON CONFLICT (event_id) DO NOTHING`;'))).toBe('evidence src/webhooks/stripe.ts:11');
  });

  it('the other ways a query is given its values, and SQL kept in a const', () => {
    const conflictOnId = 'INSERT INTO processed_events (id, event_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING';
    const refused = 'refused ON CONFLICT at src/webhooks/stripe.ts:11 keyed on randomUUID()';
    expect(scan(webhook(`  await client.query({ text: '${conflictOnId}', values: [randomUUID(), event.id] });`))).toBe(refused);
    expect(scan(webhook(`  await prisma.$executeRawUnsafe('${conflictOnId}', randomUUID(), event.id);`))).toBe(refused);
    expect(scan(webhook(`  await sequelize.query('${conflictOnId}', { bind: [randomUUID(), event.id] });`))).toBe(refused);
    expect(scan(webhook(`  const claimSql = '${conflictOnId}';\n  await db.query(claimSql, [randomUUID(), event.id]);`))).toBe(refused);
    // Named replacements are not mapped: unchanged.
    expect(scan(webhook("  await sequelize.query('INSERT INTO processed_events (id, event_id) VALUES (:id, :eventId) ON CONFLICT (id) DO NOTHING', { replacements: { id: randomUUID(), eventId: event.id } });"))).toBe(
      'evidence src/webhooks/stripe.ts:11',
    );
  });

  it('INSERT IGNORE and ON DUPLICATE KEY: no target, so only an all-fresh row is refused', () => {
    expect(scan(webhook("  await conn.execute('INSERT IGNORE INTO processed_events (id, seen_at) VALUES (?, ?)', [uuid(), Date.now()]);\n  log(event.id);"))).toBe(
      'refused INSERT IGNORE at src/webhooks/stripe.ts:11 keyed on uuid()',
    );
    expect(scan(webhook("  await conn.execute('INSERT IGNORE INTO processed_events (id, event_id) VALUES (?, ?)', [uuid(), event.id]);"))).toBe('evidence src/webhooks/stripe.ts:11');
  });

  it('Prisma upsert: the where is the key', () => {
    expect(scan(webhook('  await prisma.processedEvent.upsert({\n    where: { id: randomUUID() },\n    create: { eventId: event.id },\n    update: {},\n  });'))).toBe(
      'refused upsert at src/webhooks/stripe.ts:11 keyed on randomUUID()',
    );
    expect(scan(webhook('  const id = cuid();\n  await prisma.processedEvent.upsert({ where: { id }, create: { id, eventId: event.id }, update: {} });'))).toBe(
      'refused upsert at src/webhooks/stripe.ts:12 keyed on cuid()',
    );
    expect(scan(webhook('  await prisma.processedEvent.upsert({ where: { eventId: event.id }, create: { id: randomUUID(), eventId: event.id }, update: {} });'))).toBe('evidence src/webhooks/stripe.ts:11');
  });

  it('Drizzle onConflictDoNothing: with a target, that column; without, every value', () => {
    expect(scan(webhook('  await db.insert(processed).values({ id: createId(), eventId: event.id }).onConflictDoNothing({ target: processed.id });'))).toBe(
      'refused onConflictDoNothing at src/webhooks/stripe.ts:11 keyed on createId()',
    );
    expect(scan(webhook('  await db.insert(processed).values({ id: createId(), eventId: event.id }).onConflictDoNothing({ target: processed.eventId });'))).toBe('evidence src/webhooks/stripe.ts:11');
    expect(scan(webhook('  await db.insert(processed).values({ id: createId(), eventId: event.id }).onConflictDoNothing();'))).toBe('evidence src/webhooks/stripe.ts:11');
    expect(scan(webhook('  const row = { id: new ObjectId(), at: new Date() };\n  await db.insert(processed).values(row).onConflictDoNothing(); // for event.id'))).toBe(
      'refused onConflictDoNothing at src/webhooks/stripe.ts:12 keyed on new ObjectId()',
    );
  });

  it('Supabase and TypeORM upserts name their conflict columns', () => {
    expect(scan(webhook("  await supabase.from('processed_events').upsert({ id: randomUUID(), event_id: event.id }, { onConflict: 'id' });"))).toBe(
      'refused upsert at src/webhooks/stripe.ts:11 keyed on randomUUID()',
    );
    expect(scan(webhook("  await supabase.from('processed_events').upsert({ id: randomUUID(), event_id: event.id }, { onConflict: 'event_id' });"))).toBe('evidence src/webhooks/stripe.ts:11');
    expect(scan(webhook("  await repo.upsert({ id: v4(), eventId: event.id }, ['id']);"))).toBe('refused upsert at src/webhooks/stripe.ts:11 keyed on v4()');
  });

  it('Redis SET NX, SETNX and SADD keyed on a fresh value', () => {
    expect(scan(webhook("  const ok = await redis.set(`evt:${randomUUID()}`, event.id, 'NX', 'EX', 86400);"))).toBe('refused SET NX at src/webhooks/stripe.ts:11 keyed on randomUUID()');
    expect(scan(webhook("  const ok = await redis.set(`evt:${event.id}`, Date.now(), 'NX');"))).toBe('evidence src/webhooks/stripe.ts:11');
    expect(scan(consumer('  if (!(await redis.setnx(`job:${Math.random()}`, job.id))) return;'), messageDedupe)).toBe('refused SETNX at src/worker.ts:4 keyed on Math.random()');
    expect(scan(consumer("  if (!(await redis.sadd('seen', `${job.id}:${Date.now()}`))) return;"), messageDedupe)).toBe('refused SADD at src/worker.ts:4 keyed on Date.now()');
    expect(scan(consumer("  if (!(await redis.sadd('seen', job.id))) return;"), messageDedupe)).toBe('evidence src/worker.ts:4');
  });

  it('an insert whose unique violation is caught, with every value fresh, is not a claim on the id', () => {
    const body = "  try {\n    await prisma.delivery.create({ data: { id: randomUUID(), at: new Date() } }); // job.id\n  } catch (e) {\n    if (e.code === 'P2002') return;\n  }";
    expect(scan(consumer(body), messageDedupe)).toBe('refused insert at src/worker.ts:5 keyed on randomUUID()');
  });

  it('a later real claim still counts', () => {
    expect(scan(webhook("  await db.query('INSERT INTO log (id, event_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [randomUUID(), event.id]);\n  await redis.set(`evt:${event.id}`, '1', 'NX');"))).toBe(
      'evidence src/webhooks/stripe.ts:12',
    );
  });
});

/** What the existing-idempotency detector credits in one file, as `line mechanism detail`. */
function credited(text: string): string[] {
  const source = contextFor({ name: 'store', files: { 'src/store.ts': text } }).sources[0]!;
  const facts = emptyFacts();
  existingIdempotency.detect(fileContext(source), facts);
  return facts.findings.map((f) => `${f.line} ${f.kind === 'existing-idempotency' ? `${f.mechanism} ${f.detail}` : f.kind}`);
}

describe('a Redis SET NX claim is credited (Larriche/orders-bullmq@be502b6 dedupes its job ids with one)', () => {
  it('ioredis NX argument, node-redis { NX: true }, setnx; never a key made fresh per attempt, nor a plain SET', () => {
    const text = `export async function claim(jobIdKey: string, id: string) {
  await redis.set(jobIdKey, "1", "NX");
  await client.set(\`job:\${id}\`, '1', { NX: true, PX: 60000 });
  await redis.setnx('nightly-report', '1');
  await redis.set(crypto.randomUUID(), '1', 'NX');
  await redis.set(jobIdKey, '1', 'EX', 60);
}
declare const redis: any, client: any;
`;
    expect(credited(text)).toEqual([
      '2 set-nx claims {jobIdKey} with Redis SET NX (the first writer wins)',
      '3 set-nx claims job:{id} with Redis SET NX (the first writer wins)',
      '4 set-nx claims nightly-report with Redis SET NX (the first writer wins)',
    ]);
  });
});

describe('protection already in the code is not credited to a claim keyed on a fresh value', () => {
  it('upserts and ON CONFLICT keyed on a fresh id are left out; the same on a stable key is credited', () => {
    const text = `import { randomUUID } from 'node:crypto';
export async function record(event: { id: string }) {
  await prisma.processedEvent.upsert({ where: { id: randomUUID() }, create: { eventId: event.id }, update: {} });
  await prisma.processedEvent.upsert({ where: { eventId: event.id }, create: { eventId: event.id }, update: {} });
  await db.insert(processed).values({ id: randomUUID(), at: new Date() }).onConflictDoNothing();
  await db.insert(processed).values({ id: randomUUID(), eventId: event.id }).onConflictDoNothing();
  await pool.query('INSERT INTO processed_events (id, event_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [randomUUID(), event.id]);
  await pool.query('INSERT INTO processed_events (id, event_id) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING', [randomUUID(), event.id]);
  await queue.add('ship', event, { jobId: randomUUID() });
  await queue.add('ship', event, { jobId: event.id });
}
declare const prisma: any, db: any, pool: any, queue: any, processed: any;
`;
    expect(credited(text)).toEqual([
      '4 upsert-unique processedEvent.upsert by eventId',
      '6 upsert-unique onConflictDoNothing()',
      '10 job-id-dedupe job ship added with a deterministic jobId',
      '8 upsert-unique ON CONFLICT (event_id) DO NOTHING',
    ]);
  });
});

describe('inspect end to end: a Stripe webhook whose only claim is keyed on a fresh row id', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  const project = (conflict: string): string => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ib-randomid-'));
    dirs.push(dir);
    const files: Record<string, string> = {
      'package.json': JSON.stringify({ dependencies: { express: '^4.19.0', stripe: '^17.0.0', pg: '^8.11.0' } }),
      'src/app.ts': `import express from 'express';
import Stripe from 'stripe';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';

const stripe = new Stripe(process.env.STRIPE_SECRET_KEY!);
const db = new Pool();
export const app = express();

app.post('/webhooks/stripe', express.raw({ type: 'application/json' }), async (req, res) => {
  const event = stripe.webhooks.constructEvent(req.body, req.headers['stripe-signature'] as string, process.env.STRIPE_WEBHOOK_SECRET!);
  const claimed = await db.query('INSERT INTO processed_events (id, event_id) VALUES ($1, $2) ${conflict}', [randomUUID(), event.id]);
  if (claimed.rowCount === 0) return res.sendStatus(200);
  await db.query('UPDATE orders SET paid = true WHERE session_id = $1', [(event.data.object as { id: string }).id]);
  res.sendStatus(200);
});
`,
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    return dir;
  };
  const plain = { value: (v: unknown) => String(v), dim: (v: string) => v };

  it('ON CONFLICT (id): no dedupe, no credit as existing protection, and the summary says why', async () => {
    const inspection = await inspectProject(project('ON CONFLICT (id) DO NOTHING'));
    const webhook = inspection.findings.find((f) => f.kind === 'webhook') as WebhookFinding;
    expect(webhook.dedupesEventId).toBe(false);
    expect(webhook.perAttemptClaim).toEqual({ file: 'src/app.ts', line: 12, claim: 'ON CONFLICT', value: 'randomUUID()' });
    expect(inspection.findings.filter((f) => f.kind === 'existing-idempotency')).toEqual([]);
    expect(formatInspection(inspection, plain)).toContain('no event-id dedupe (the ON CONFLICT at src/app.ts:12 is keyed on randomUUID(), made fresh per delivery)');
  });

  it('ON CONFLICT (event_id): evidence, as before', async () => {
    const inspection = await inspectProject(project('ON CONFLICT (event_id) DO NOTHING'));
    const webhook = inspection.findings.find((f) => f.kind === 'webhook') as WebhookFinding;
    expect(webhook.dedupesEventId).toBe(true);
    expect(webhook.dedupeEvidence).toMatchObject({ file: 'src/app.ts', line: 12 });
    expect(webhook.perAttemptClaim).toBeUndefined();
  });
});
