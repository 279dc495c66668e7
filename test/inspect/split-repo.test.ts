import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';

/** Two packages side by side and no root package.json: each package has its own stack, the repo the union. */
describe('inspect split-repo', () => {
  const root = path.resolve('fixtures/projects/split-repo');

  it('gives each package its stack: Neon is PostgreSQL, PlanetScale is MySQL', async () => {
    const { stack } = await inspectProject(root);
    expect(stack.frameworks).toEqual(['express']);
    expect(stack.databases).toEqual(['mysql', 'postgres']);
    expect(stack.brokers).toEqual(['bullmq']);
    expect(stack.packages?.map((p) => [p.dir, p.name, p.stack.language, p.stack.frameworks, p.stack.databases, p.stack.brokers, p.stack.testFramework])).toEqual([
      ['api', 'shop-api', 'typescript', ['express'], ['postgres'], [], 'jest'],
      ['worker', 'shop-worker', 'javascript', [], ['mysql'], ['bullmq'], 'mocha'],
    ]);
  });

  it('tags findings with their package', async () => {
    const { findings } = await inspectProject(root);
    expect(findings.map((f) => [f.kind, f.id, f.package])).toEqual([
      ['endpoint', 'POST /orders', 'shop-api'],
      ['consumer', 'bullmq shipments', 'shop-worker'],
    ]);
  });
});
