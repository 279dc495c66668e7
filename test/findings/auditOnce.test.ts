import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditProject } from '../../src/findings/auditProject.js';
import { inspectProject } from '../../src/inspect/index.js';
import { ROOT } from '../e2e/cli.js';

const located = (findings: ReadonlyArray<{ ruleId: string; file: string; line: number }>) => findings.map((f) => `${f.ruleId} ${f.file}:${f.line}`).sort();

describe('audit reads the project once', () => {
  it.each(['jobs-and-queues', 'worker-service', 'next-app'])('%s: consumers and crons found on audit\'s own parse give the findings a full inspection gives', async (name) => {
    const dir = path.join(ROOT, 'fixtures/projects', name);
    const once = await auditProject(dir, { config: null });
    const twice = await auditProject(dir, { config: null, inspection: await inspectProject(dir) });
    expect(located(once.findings)).toEqual(located(twice.findings));
    expect(once.findings.some((f) => f.ruleId === 'consumer-without-dedupe' || f.ruleId === 'cron-without-overlap-guard')).toBe(true);
  });
});
