import type { DesignModel } from '../../model/types.js';
import type { CodeSample } from './ddl.js';

export function fingerprintSample(model: DesignModel): CodeSample {
  const fields = model.actions.map((a) => `  ${JSON.stringify(a.name)}: ${JSON.stringify(a.significantFields)},`).join('\n');
  return {
    language: 'typescript',
    code: `import { createHash, timingSafeEqual } from 'node:crypto';

export const FINGERPRINT_ALGORITHM = '${model.fingerprint.algorithmId}';

/** Significant fields per action: change one of these and it is a different intent. */
export const SIGNIFICANT_FIELDS: Record<string, readonly string[]> = {
${fields}
};

/** JSON with object keys sorted at every depth, so field order never changes the hash. */
export function canonicalJson(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (Array.isArray(value)) return \`[\${value.map(canonicalJson).join(',')}]\`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return \`{\${entries.map(([k, v]) => \`\${JSON.stringify(k)}:\${canonicalJson(v)}\`).join(',')}}\`;
  }
  return JSON.stringify(value);
}

/** Reads "items[].sku" style paths; a missing field is null, so absent and null are one intent. */
export function pick(body: unknown, path: string): unknown {
  const [head, ...rest] = path.split('.');
  const list = head!.endsWith('[]');
  const value = body && typeof body === 'object' ? (body as Record<string, unknown>)[list ? head!.slice(0, -2) : head!] : undefined;
  if (list) return Array.isArray(value) ? value.map((item) => (rest.length ? pick(item, rest.join('.')) : item)) : null;
  return rest.length ? pick(value, rest.join('.')) : (value ?? null);
}

export function computeFingerprint(method: string, routeTemplate: string, fields: readonly string[], body: unknown): string {
  const significant = Object.fromEntries(fields.map((field) => [field, pick(body, field)]));
  const canonical = canonicalJson({ method: method.toUpperCase(), route: routeTemplate, fields: significant });
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** Constant-time: the time taken does not depend on where two fingerprints first differ. */
export function fingerprintsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === 32 && right.length === 32 && timingSafeEqual(left, right);
}`,
  };
}

export function cleanupSample(model: DesignModel): CodeSample {
  const { table } = model.storage;
  const db = model.stack.storeDatabase;
  const limitDelete =
    db === 'mysql' || db === 'mariadb'
      ? `DELETE FROM ${table}
          WHERE expires_at < CURRENT_TIMESTAMP(3)
            AND (status <> 'PROCESSING' OR locked_until < CURRENT_TIMESTAMP(3))
          LIMIT ${model.cleanup.batchSize}`
      : `DELETE FROM ${table} WHERE ctid IN (
         SELECT ctid FROM ${table}
          WHERE expires_at < now() AND (status <> 'PROCESSING' OR locked_until < now())
          LIMIT ${model.cleanup.batchSize}
          FOR UPDATE SKIP LOCKED)`;
  const body = `  let total = 0;
  for (;;) {
    // Small batches keep each transaction short; SKIP LOCKED never waits on rows a request holds.
    const result = await db.query(\`${limitDelete}\`);
    total += result.rowCount ?? 0;
    if ((result.rowCount ?? 0) < ${model.cleanup.batchSize}) return total;
  }`;
  return {
    language: 'typescript',
    code: `// Cleanup job: schedule "${model.cleanup.schedule}" (${model.cleanup.scheduleLabel}).
// A live claim is never deleted: a PROCESSING row goes only once its lease has lapsed too (abandoned).
export async function pruneExpired(db: Queryable): Promise<number> {
${body}
}

if (import.meta.url === \`file://\${process.argv[1]}\`) {
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, statement_timeout: 30_000 });
  pruneExpired(pool)
    .then((deleted) => console.log(\`idempotency cleanup: \${deleted} expired rows removed\`))
    .finally(() => pool.end());
}`,
  };
}

export function testSample(model: DesignModel): CodeSample {
  const runner = model.stack.testFramework;
  const importLine =
    runner === 'jest'
      ? "import { describe, it, expect } from '@jest/globals';"
      : runner === 'node-test'
        ? "import { describe, it } from 'node:test';\nimport assert from 'node:assert/strict';"
        : runner === 'mocha'
          ? "import { expect } from 'chai';"
          : "import { describe, it, expect } from 'vitest';";
  const expect = (actual: string, expected: string) =>
    runner === 'node-test' ? `assert.equal(${actual}, ${expected});` : runner === 'mocha' ? `expect(${actual}).to.equal(${expected});` : `expect(${actual}).toBe(${expected});`;
  const first = model.actions.find((a) => a.method) ?? model.actions[0]!;
  const route = first.path ?? '/';
  const cases = model.tests
    .map((test) => `  it(${JSON.stringify(`${test.name}: ${test.verifies}`)}, async () => {\n    // ${test.input}\n    // expect: ${test.expected}\n${testBody(test.id, expect, model)}\n  });`)
    .join('\n\n');
  return {
    language: 'typescript',
    code: `${importLine}
// Runs against a real ${model.stack.databaseLabel}: DATABASE_URL must point at a disposable database.
const route = ${JSON.stringify(route)};

describe(${JSON.stringify(`${first.name} idempotency`)}, () => {
${cases}
});`,
  };
}

function testBody(id: string, expect: (a: string, e: string) => string, model: DesignModel): string {
  switch (id) {
    case 'first-request':
      return `    const res = await post(route, body, { key: newKey() });\n    ${expect('res.status < 300', 'true')}\n    ${expect('await executions()', '1')}`;
    case 'replay':
      return `    const key = newKey();\n    const first = await post(route, body, { key });\n    const again = await post(route, body, { key });\n    ${expect("again.headers.get('idempotent-replayed')", "'true'")}\n    ${expect('await again.text()', 'await first.text()')}\n    ${expect('await executions()', '1')}`;
    case 'mismatch':
      return `    const key = newKey();\n    await post(route, body, { key });\n    const res = await post(route, { ...body, ${JSON.stringify(model.actions[0]!.significantFields[0] ?? 'amount')}: 'changed' }, { key });\n    ${expect('res.status', String(model.responses.mismatchStatus))}`;
    case 'concurrent':
      return `    const key = newKey();\n    const all = await Promise.all(Array.from({ length: 50 }, () => post(route, body, { key })));\n    ${expect('all.every((r) => r.status < 500)', 'true')}\n    ${expect('await executions()', '1')}`;
    case 'other-principal':
      return `    const key = newKey();\n    await post(route, body, { key, user: 'alice' });\n    const res = await post(route, body, { key, user: 'bob' });\n    ${expect("res.headers.get('idempotent-replayed')", 'null')}\n    ${expect('await executions()', '2')}`;
    case 'expired':
      return `    const key = newKey();\n    await post(route, body, { key });\n    await expireRecord(key); // UPDATE … SET expires_at = now() - interval '1 second'\n    await post(route, body, { key });\n    ${expect('await executions()', '2')}`;
    case 'crash':
      return `    const key = newKey();\n    await claimAndAbandon(key); // a PROCESSING row whose lease has lapsed\n    const res = await post(route, body, { key });\n    ${expect('res.status < 300', 'true')}\n    ${expect('await lateCompletionFromOldOwner(key)', 'false')}`;
    case 'saga-resume':
      return `    const key = newKey();\n    failStepOnce(2);\n    await post(route, body, { key });\n    await post(route, body, { key });\n    ${expect('await stepRuns(1)', '1')}`;
    case 'store-down':
      return `    await withStoreDown(async () => {\n      const res = await post(route, body, { key: newKey() });\n      ${expect('res.status', '503')}\n    });`;
    default:
      return `    failHandlerOnce();\n    const key = newKey();\n    ${expect('(await post(route, body, { key })).status', '500')}\n    ${expect('(await post(route, body, { key })).status < 300', 'true')}`;
  }
}

export function monitoringSample(model: DesignModel): CodeSample {
  const rules = model.metrics
    .filter((m) => m.alertExpr)
    .map(
      (m) => `      - alert: ${m.promName.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase()).replace(/Total$/, '')}
        expr: ${yamlString(m.alertExpr!)}
        for: ${m.severity === 'page' ? '5m' : '15m'}
        labels:
          severity: ${m.severity}
        annotations:
          summary: ${yamlString(m.alert)}`,
    )
    .join('\n');
  return {
    language: 'yaml',
    code: `# Prometheus alert rules for the idempotency layer (generated; do not edit by hand).
groups:
  - name: idempotency
    rules:
${rules}`,
  };
}

function yamlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
