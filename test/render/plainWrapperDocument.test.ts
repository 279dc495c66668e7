import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRequestFlow } from '../../src/diagrams/buildRequestFlow.js';
import { rawFixture } from '../helpers/fixtures.js';
import { renderConfig } from '../helpers/generateInto.js';

/**
 * Issue 15: when every action is reached without a route of its own and the framework is unknown, the code is the
 * plain idempotent(fn) wrapper. It returns the stored JSON result or throws; it sends no status, header or body, so
 * the document must not promise any.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The agnostic fixture with its action reached as a GraphQL mutation, plus (optionally) a cron job. */
function plainConfig(options: { cron?: boolean; inFlight?: 'wait' } = {}): Record<string, unknown> {
  const raw = rawFixture('agnostic-unknown-stack');
  const [action] = raw.actions as Array<Record<string, unknown>>;
  raw.actions = [
    { ...action, transport: 'graphql' },
    ...(options.cron ? [{ name: 'nightlyPayouts', trigger: 'cron', significantFields: ['slot'] }] : []),
  ];
  if (options.inFlight) raw.inFlight = options.inFlight;
  return raw;
}

async function render(raw: Record<string, unknown>, format: 'html' | 'md' = 'html') {
  const result = await renderConfig(raw, { format });
  dirs.push(result.dir);
  return result;
}

/** The prose a reader takes as the design's claims: code excerpts (the generated files themselves) and the SVG left out. */
function prose(html: string): string {
  return html
    .replace(/<style>[\s\S]*?<\/style>/g, '')
    .replace(/<pre[\s\S]*?<\/pre>/g, '')
    .replace(/<svg[\s\S]*?<\/svg>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");
}

/** What the wrapper never does: answer with an HTTP status, a header or a body. */
const HTTP_CLAIMS = [
  /\b(400|401|403|409|422|429|503)\b/,
  /\b5xx\b/,
  /problem\+json/,
  /Retry-After/,
  /Idempotent-Replayed/,
  /allow-listed headers/,
  /exact body bytes/,
  /[Pp]asses through untouched/,
  /response-not-replayable/,
  /Method other than/,
];

describe('design document for a plain-wrapper project', () => {
  it('html: matches the golden file', async () => {
    const { text, model } = await render(plainConfig());
    expect(model.stack.plain).toBe(true);
    await expect(text).toMatchFileSnapshot('__golden__/plain-wrapper-graphql.html');
  });

  it('md: matches the golden file', async () => {
    const { text } = await render(plainConfig(), 'md');
    await expect(text).toMatchFileSnapshot('__golden__/plain-wrapper-graphql.md');
  });

  it.each([
    ['a GraphQL mutation', {}],
    ['a GraphQL mutation and a cron job, duplicates waiting', { cron: true, inFlight: 'wait' as const }],
  ])('%s: no sentence promises an HTTP status, header or body', async (_name, options) => {
    const { text } = await render(plainConfig(options));
    const claims = prose(text);
    for (const pattern of HTTP_CLAIMS) expect(claims, String(pattern)).not.toMatch(pattern);
    // What it does instead, in the rows the issue names.
    expect(claims).toContain('Throws MismatchError');
    expect(claims).toContain('InFlightError carrying retryAfterSeconds');
    expect(claims).toContain('Throws InvalidKeyError');
    expect(claims).toContain('Throws StoreUnavailableError');
    expect(claims).toContain('Returns the stored JSON result');
    if ('inFlight' in options && options.inFlight === 'wait') expect(claims).toMatch(/polls the record for up to [\d.]+ (second|millisecond)s? for the first one to finish/);
  });

  it('every error the document names is thrown by the generated code, with the property it says it carries', async () => {
    const { text, plan } = await render({ ...plainConfig({ cron: true }), scaffold: { dir: 'src/idempotency' } });
    const generated = plan
      .filter((item) => /\/(plain|core|types)\.ts$/.test(item.path))
      .map((item) => String(item.contents))
      .join('\n');
    expect(generated).toContain('export function idempotent(');
    const named = new Set([...prose(text).matchAll(/\b([A-Z][A-Za-z]*Error)\b/g)].map((m) => m[1]!));
    expect(named.size).toBeGreaterThan(5);
    for (const name of named) expect(generated, name).toMatch(new RegExp(`export class ${name} extends Error`));
    expect(generated).toMatch(/class InFlightError extends Error \{\s*constructor\(readonly retryAfterSeconds: number\)/);
    expect(generated).toMatch(/constructor\(readonly reason: 'missing' \| 'empty' \| 'too-long' \| 'invalid'\)/);
    expect(generated).toContain('replayed: boolean');
  });

  it('the request-flow diagram labels the wrapper’s errors, never a status', () => {
    const inputs = {
      keys: { header: 'Idempotency-Key' },
      responses: { mismatchStatus: 422, inFlightStatus: 409, inFlight: 'reject', inFlightWaitMs: 0, retryAfterSeconds: 9, storeUnavailableStatus: 503, replayHeader: 'Idempotent-Replayed' },
      detection: { storeTimeoutMs: 2_500 },
      actions: [{ trigger: 'http' as const, provider: undefined }],
    } as const;
    const labels = (graph: ReturnType<typeof buildRequestFlow>) =>
      [...graph.nodes.map((n) => n.label), ...graph.edges.map((e) => e.label ?? '')].flat().join('\n');
    const plain = labels(buildRequestFlow({ ...inputs, stack: { plain: true } }));
    for (const pattern of HTTP_CLAIMS) expect(plain, String(pattern)).not.toMatch(pattern);
    for (const name of ['InvalidKeyError', 'StoreUnavailableError', 'MismatchError', 'InFlightError']) expect(plain).toContain(name);
    // The HTTP flow keeps its statuses.
    expect(labels(buildRequestFlow(inputs))).toContain('409 + Retry-After: 9');
  });
});
