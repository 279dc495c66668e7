import { describe, expect, it } from 'vitest';
import { withWiring } from '../../src/apply/withWiring.js';
import { parseConfig } from '../../src/config/load.js';
import type { CodeFinding } from '../../src/findings/types.js';
import { buildDesign } from '../../src/model/index.js';

const action = (name: string, line: number) => ({ name, trigger: 'http' as const, route: `POST /${name}`, significantFields: ['amount'], source: `src/routes.ts:${line}` });
const config = parseConfig(JSON.stringify({
  format: 'md',
  output: 'docs/d.md',
  actions: [action('createOrder', 3), action('createRefund', 9)],
  stack: { language: 'typescript', framework: 'express', database: 'postgres', broker: 'none', testFramework: 'vitest' },
  retrySources: ['client-retry'],
  payments: [],
  concurrency: 'multi-instance',
  retention: '24h',
  detectionLatency: '50ms',
  scaffold: { dir: 'src/idempotency' },
}));
const notWrapped = (name: string, line: number): CodeFinding => ({
  ruleId: 'action-not-wrapped',
  title: 'Configured action not wrapped by the generated protection',
  severity: 'error',
  file: 'src/routes.ts',
  line,
  column: 1,
  message: `Action ${name} (POST /${name}) is configured but no file imports the generated layer in src/idempotency/ and uses it for ${name}.`,
  evidence: `router.post('/${name}', handler)`,
  fix: 'Mount the generated middleware on the route.',
  docsAnchor: 'finding-action-not-wrapped',
  fingerprint: `action-not-wrapped:${name}`,
  action: name,
});

describe('the design once apply wired some actions', () => {
  it('no longer calls an action apply wired "not wrapped"; one it left alone keeps the finding (nestjs-super@8e6b270)', () => {
    const model = buildDesign(config, undefined, { now: new Date('2026-01-15T00:00:00Z'), findings: [notWrapped('createOrder', 3), notWrapped('createRefund', 9)] });
    // One handler file, but the rule names its action: each finding is tied to that action alone.
    expect(model.findings.map((f) => f.actions)).toEqual([['createOrder'], ['createRefund']]);
    const wired = withWiring(model, {
      files: {},
      actions: [
        { action: 'createOrder', applied: [{ file: 'src/routes.ts', summary: 'mounts idempotency.createOrder before the handler of POST /createOrder' }], manual: [] },
        { action: 'createRefund', applied: [], manual: [{ action: 'createRefund', reason: 'a shape apply does not recognise' }] },
      ],
    });
    const left = wired.findings.map((f) => f.message);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(/^Action createRefund /);
    expect(wired.actions.find((a) => a.name === 'createRefund')?.findings.map((f) => f.message)).toEqual(left);
    expect(wired.actions.find((a) => a.name === 'createOrder')?.findings).toEqual([]);
  });
});
