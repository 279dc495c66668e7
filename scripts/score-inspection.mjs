#!/usr/bin/env node
/**
 * Recall and precision of the inspector against a hand-written ground truth (test/inspect/ground-truth/*.json),
 * per kind. Usage: npm run build && node scripts/score-inspection.mjs <checkout-dir> <truth.json> [--misses]
 * Keys: endpoints as "file METHOD /path"; payments, webhooks, consumers and crons as "file:line".
 */
import { readFileSync } from 'node:fs';
import { inspect as inspectProject } from '../dist/index.js';

const [dir, truthFile, flag] = process.argv.slice(2);
if (!dir || !truthFile) {
  console.error('usage: node scripts/score-inspection.mjs <checkout-dir> <truth.json> [--misses]');
  process.exit(2);
}
const truth = JSON.parse(readFileSync(truthFile, 'utf8'));
const inspection = await inspectProject(dir);
const keyOf = (f) => (f.kind === 'endpoint' ? `${f.file} ${f.id}` : `${f.file}:${f.line}`);
const kinds = ['endpoint', 'payment', 'webhook', 'consumer', 'cron'];
const rows = [];
for (const kind of kinds) {
  const expected = new Set(truth.expected[kind] ?? []);
  const found = new Set(inspection.findings.filter((f) => f.kind === kind).map(keyOf));
  const hit = [...found].filter((k) => expected.has(k));
  const recall = expected.size ? hit.length / expected.size : 1;
  const precision = found.size ? hit.length / found.size : 1;
  rows.push({ kind, expected: expected.size, found: found.size, hit: hit.length, recall: recall.toFixed(2), precision: precision.toFixed(2) });
  if (flag === '--misses') {
    for (const k of expected) if (!found.has(k)) console.log(`  miss ${kind}: ${k}`);
    for (const k of found) if (!expected.has(k)) console.log(`  extra ${kind}: ${k}`);
  }
}
console.log(`${truth.repo}@${truth.commit.slice(0, 12)}`);
console.table(rows);
