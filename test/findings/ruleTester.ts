import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { configSchema } from '../../src/config/schema.js';
import { parseSource } from '../../src/inspect/parse/parseSource.js';
import type { Inspection } from '../../src/inspect/types.js';
import { runRules } from '../../src/findings/runRules.js';
import { readSchemaFacts, SCHEMA_IN_CODE } from '../../src/findings/schemaFacts.js';
import type { CodeFinding, ProjectContext, Rule } from '../../src/findings/types.js';

/** A tiny project: source files by path; `.prisma`, `.sql` and `vercel.json` become schema/auxiliary texts. */
export interface Case {
  name: string;
  files: Record<string, string>;
  config?: unknown;
  inspection?: Pick<Inspection, 'findings'>;
  dependencies?: Record<string, string>;
}

export interface InvalidCase extends Case {
  /** One expected finding per entry: the line and words its message must contain. */
  errors: Array<{ file?: string; line: number; message?: RegExp; severity?: CodeFinding['severity'] }>;
}

export function contextFor(c: Case): ProjectContext {
  const auxiliary = new Map<string, string>();
  const schemaTexts = new Map<string, string>();
  const dependencies = new Map(Object.entries(c.dependencies ?? { stripe: '^17.0.0' }));
  const entries = Object.entries(c.files);
  for (const [rel, text] of entries) {
    if (/\.(prisma|sql)$/.test(rel) || SCHEMA_IN_CODE.test(text)) schemaTexts.set(rel, text);
    if (/\.(prisma|sql|json)$/.test(rel)) auxiliary.set(rel, text);
  }
  const schema = readSchemaFacts(schemaTexts);
  const sources = entries
    .filter(([rel]) => /\.[cm]?[jt]sx?$/.test(rel))
    .map(([rel, text]) => ({ rel, text, sf: parseSource(rel, text).sf, schema, dependencies }));
  const config = c.config === undefined ? undefined : (configSchema.parse(c.config) as Config);
  if (c.config !== undefined) auxiliary.set('idempotency.config.json', JSON.stringify(c.config, null, 2));
  return { sources, schema, auxiliary, dependencies, ...(config ? { config } : {}), ...(c.inspection ? { inspection: c.inspection } : {}) };
}

export function findingsFor(rule: Rule, c: Case): CodeFinding[] {
  return runRules(contextFor(c), [rule]);
}

/** typescript-eslint style: every `valid` case is silent, every `invalid` case reports exactly its errors. */
export function ruleTester(rule: Rule, cases: { valid: Case[]; invalid: InvalidCase[] }): void {
  describe(rule.id, () => {
    for (const c of cases.valid) {
      it(`valid: ${c.name}`, () => {
        expect(findingsFor(rule, c).map((f) => `${f.file}:${f.line} ${f.message}`)).toEqual([]);
      });
    }
    for (const c of cases.invalid) {
      it(`invalid: ${c.name}`, () => {
        const found = findingsFor(rule, c);
        expect(found.map((f) => `${f.file}:${f.line}`)).toEqual(c.errors.map((e) => `${e.file ?? Object.keys(c.files)[0]}:${e.line}`));
        c.errors.forEach((e, i) => {
          const f = found[i] as CodeFinding;
          if (e.message) expect(f.message).toMatch(e.message);
          if (e.severity) expect(f.severity).toBe(e.severity);
          expect(f.ruleId).toBe(rule.id);
          expect(f.fix.length).toBeGreaterThan(20);
        });
      });
    }
  });
}

/** The smallest valid config naming `actions`; other answers are fixed. */
export function configWith(actions: unknown[], extra: Record<string, unknown> = {}): unknown {
  return {
    actions,
    stack: { language: 'typescript', framework: 'express', database: 'postgres' },
    concurrency: 'multi-instance',
    retention: '72h',
    detectionLatency: '50ms',
    ...extra,
  };
}
