// Benchmark: inspect a generated 2,000-file tree and compare with a bare `ts.createSourceFile` parse of the same
// files in the same run. Targets: ratio ≤ 1.5×, peak RSS ≤ 600 MB. Needs `npm run build` first (imports dist/).
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ts } from 'ts-morph';

const FILES = Number(process.env.BENCH_FILES ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const { inspectProject } = await import(new URL('../dist/inspect/index.js', import.meta.url).href);

/** A realistic mix for a mid-size backend plus its front-end: the kinds of files the inspector meets. */
const templates = [
  (i) => [`src/routes/resource${i}.ts`, `import { Router } from 'express';\nimport { z } from 'zod';\nimport { service${i} } from '../services/service${i}.js';\n\nexport const router${i} = Router();\nconst body${i} = z.object({ name: z.string(), amount: z.number(), note: z.string().optional() });\n\nrouter${i}.get('/', async (_req, res) => res.json(await service${i}.list()));\nrouter${i}.post('/', async (req, res) => {\n  const input = body${i}.parse(req.body);\n  res.status(201).json(await service${i}.create(input));\n});\nrouter${i}.patch('/:id', async (req, res) => {\n  const { name } = req.body;\n  res.json(await service${i}.rename(req.params.id, name));\n});\nrouter${i}.delete('/:id', async (req, res) => {\n  await service${i}.remove(req.params.id);\n  res.sendStatus(204);\n});\n`],
  (i) => [`src/services/service${i}.ts`, `import { db } from '../db.js';\n\nexport interface Item${i} { id: string; name: string; amount: number; createdAt: Date }\n\nexport const service${i} = {\n  async list(): Promise<Item${i}[]> {\n    const { rows } = await db.query('SELECT * FROM items_${i} ORDER BY created_at DESC LIMIT 100');\n    return rows;\n  },\n  async create(input: { name: string; amount: number }) {\n    const { rows } = await db.query('INSERT INTO items_${i} (name, amount) VALUES ($1, $2) RETURNING *', [input.name, input.amount]);\n    return rows[0];\n  },\n  async rename(id: string, name: string) {\n    await db.query('UPDATE items_${i} SET name = $1 WHERE id = $2', [name, id]);\n    return { id, name };\n  },\n  async remove(id: string) {\n    await db.query('DELETE FROM items_${i} WHERE id = $1', [id]);\n  },\n};\n`],
  (i) => [`src/payments/charge${i}.ts`, `import Stripe from 'stripe';\n\nconst stripe = new Stripe(process.env.STRIPE_KEY ?? '');\n\nexport async function charge${i}(customer: string, amount: number, key: string) {\n  const intent = await stripe.paymentIntents.create({ customer, amount, currency: 'usd' }, { idempotencyKey: key });\n  return intent.id;\n}\n\nexport async function refund${i}(paymentIntent: string) {\n  return stripe.refunds.create({ payment_intent: paymentIntent });\n}\n`],
  (i) => [`src/lib/util${i}.ts`, `export function formatMoney${i}(cents: number, currency = 'USD'): string {\n  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(cents / 100);\n}\n\nexport function chunk${i}<T>(items: readonly T[], size: number): T[][] {\n  const out: T[][] = [];\n  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));\n  return out;\n}\n\nexport const sleep${i} = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));\n\nexport function retry${i}<T>(fn: () => Promise<T>, attempts = 3): Promise<T> {\n  return fn().catch((error) => (attempts > 1 ? sleep${i}(100).then(() => retry${i}(fn, attempts - 1)) : Promise.reject(error)));\n}\n`],
  (i) => [`src/components/Widget${i}.tsx`, `import { useState } from 'react';\n\nexport function Widget${i}({ title }: { title: string }) {\n  const [count, setCount] = useState(0);\n  const save = async () => {\n    await fetch('/api/widgets/${i}', { method: 'POST', body: JSON.stringify({ count }) });\n  };\n  return (\n    <section>\n      <h2>{title}</h2>\n      <button onClick={() => setCount(count + 1)}>+1</button>\n      <button onClick={save}>Save</button>\n    </section>\n  );\n}\n`],
  (i) => [`src/jobs/worker${i}.ts`, `import { Worker } from 'bullmq';\n\nexport const worker${i} = new Worker('queue-${i}', async (job) => {\n  const { id } = job.data as { id: string };\n  return { processed: id };\n}, { connection: { host: 'redis' } });\n`],
  (i) => [`src/types/model${i}.ts`, `export type Status${i} = 'pending' | 'active' | 'archived';\n\nexport interface Model${i} {\n  id: string;\n  status: Status${i};\n  ownerId: string;\n  tags: string[];\n  metadata: Record<string, unknown>;\n  createdAt: Date;\n  updatedAt: Date;\n}\n\nexport const defaults${i}: Partial<Model${i}> = { status: 'pending', tags: [] };\n`],
  (i) => [`src/routes/resource${i}.test.ts`, `import { describe, it, expect } from 'vitest';\n\ndescribe('resource ${i}', () => {\n  it('works', () => {\n    expect(1 + 1).toBe(2);\n  });\n});\n`],
];

// BENCH_MIX=heavy: only files every detector must parse (routes, services, payments, workers): the worst case.
const mix = process.env.BENCH_MIX === 'heavy' ? [templates[0], templates[1], templates[2], templates[5]] : templates;

async function generate(root) {
  const files = [];
  for (let i = 0; i < FILES; i++) {
    const [rel, text] = mix[i % mix.length](i);
    const abs = path.join(root, rel);
    await mkdir(path.dirname(abs), { recursive: true });
    await writeFile(abs, text);
    files.push(abs);
  }
  await writeFile(path.join(root, 'package.json'), JSON.stringify({ name: 'bench', dependencies: { express: '4', stripe: '16', bullmq: '5', pg: '8', react: '18' } }));
  await writeFile(path.join(root, 'src/db.ts'), "import pg from 'pg';\nexport const db = new pg.Pool();\n");
  return files;
}

/** The baseline: read every generated file and parse it, nothing else. */
async function bareParse(files) {
  let nodes = 0;
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    nodes += sf.statements.length;
  }
  return nodes;
}

async function time(fn) {
  const start = performance.now();
  const result = await fn();
  return { ms: performance.now() - start, result };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const root = await mkdtemp(path.join(tmpdir(), 'inspect-bench-'));
try {
  const files = await generate(root);
  // Warm both paths once so JIT and module loading are not billed to either side.
  await bareParse(files.slice(0, 200));
  await inspectProject(root);
  const bare = [];
  const inspect = [];
  let findings = 0;
  for (let round = 0; round < ROUNDS; round++) {
    bare.push((await time(() => bareParse(files))).ms);
    const run = await time(() => inspectProject(root));
    inspect.push(run.ms);
    findings = run.result.findings.length;
  }
  const bareMs = median(bare);
  const inspectMs = median(inspect);
  const ratio = inspectMs / bareMs;
  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  const ok = ratio <= 1.5 && peakRssMb <= 600;
  console.log(`files            ${files.length}`);
  console.log(`findings         ${findings}`);
  console.log(`bare parse       ${bareMs.toFixed(0)} ms (median of ${ROUNDS})`);
  console.log(`inspect          ${inspectMs.toFixed(0)} ms (median of ${ROUNDS})`);
  console.log(`ratio            ${ratio.toFixed(2)}× (target ≤ 1.5×)`);
  console.log(`peak RSS         ${peakRssMb.toFixed(0)} MB (target ≤ 600 MB)`);
  console.log(ok ? 'PASS' : 'FAIL');
  process.exitCode = ok ? 0 : 1;
} finally {
  await rm(root, { recursive: true, force: true });
}
