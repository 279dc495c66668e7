import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';
import type { EndpointFinding, HttpMethod, Inspection, StackFacts } from '../../src/inspect/types.js';

/** A stack as inspection reports it for a TypeScript project that authenticates nothing, with `facts` found in it. */
export function stackOf(facts: Pick<StackFacts, 'testFramework' | 'packageManager'> & Partial<StackFacts>): StackFacts {
  return { language: 'typescript', authentication: [], frameworks: [], databases: [], orms: [], brokers: [], payments: [], ...facts };
}

/** What an endpoint finding may add to the route, place and framework endpoint() takes. */
type EndpointDetails = Partial<Omit<EndpointFinding, 'kind' | 'id' | 'file' | 'line' | 'method' | 'path' | 'framework'>>;

/**
 * An endpoint finding as the fixtures list them: `route` ('POST /orders') is its id, `at` ('src/app.ts:16') where it
 * is declared; its mount prefix resolved and no payment touched unless `details` says otherwise.
 */
export function endpoint(framework: string, route: string, at: string, details: EndpointDetails = {}): EndpointFinding {
  const space = route.indexOf(' ');
  const colon = at.lastIndexOf(':');
  return {
    kind: 'endpoint',
    id: route,
    file: at.slice(0, colon),
    line: Number(at.slice(colon + 1)),
    method: route.slice(0, space) as HttpMethod,
    path: route.slice(space + 1),
    framework,
    prefixResolved: true,
    touchesPayment: false,
    ...details,
  };
}

/**
 * One fixture project under fixtures/projects, inspected as a reviewer would state it: the stack, then exactly the
 * findings and warnings (none unless given).
 */
export function describeFixtureInspection(
  name: string,
  expected: { stack: StackFacts; findings: Inspection['findings']; warnings?: string[] },
): void {
  describe(`inspect ${name}`, () => {
    const root = path.resolve('fixtures/projects', name);

    it('reports the stack', async () => {
      const inspection = await inspectProject(root);
      expect(inspection.root).toBe(root);
      expect(inspection.stack).toEqual(expected.stack);
    });

    it('finds exactly what a reviewer would list', async () => {
      const { findings, warnings } = await inspectProject(root);
      expect(findings).toEqual(expected.findings);
      expect(warnings).toEqual(expected.warnings ?? []);
    });
  });
}
