import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { buildDesign } from '../../src/model/index.js';
import { generateScaffold, type ScaffoldFile } from '../../src/scaffold/index.js';

const NOW = new Date('2026-01-15T00:00:00Z');

/**
 * Strings that would end a quoted string, a template literal, a line or a block comment and then run code, if any
 * renderer pasted them into a generated file instead of printing them as literals.
 */
const BREAKOUT = "x'); anything(); ('\"`${process.exit(1)}`*/ anything(); /* \\";
/**
 * Free text (title, description, source). Line breaks and U+2028, which would end a line comment, are refused by the
 * config schema itself (test/config/limits.test.ts), so what can reach a renderer is the rest of the break-out.
 */
const TEXT_BREAKOUT = `${BREAKOUT} anything();`;
const PATH_BREAKOUT = "/x');anything();('\"`${process.exit(1)}`*/anything();/*";
// No dot: a dot in a field name is a nested path, which legitimately changes the sample request's shape.
const FIELD_BREAKOUT = "f');anything();('\"`${exit(1)}`*/anything();/*";

/** The same design twice: once with plain names, once with a break-out attempt in every field that reaches code. */
type Framework = 'express' | 'fastify' | 'nestjs' | 'koa' | 'hono' | 'nextjs' | 'none';

function config(hostile: boolean, framework: Framework, language: 'typescript' | 'javascript' = 'typescript') {
  const text = (plain: string, attack: string) => (hostile ? attack : plain);
  return {
    title: text('Orders design', TEXT_BREAKOUT),
    actions: [
      {
        name: text('placeOrder', BREAKOUT),
        trigger: 'http',
        route: `POST ${text('/orders', PATH_BREAKOUT)}`,
        significantFields: [text('sku', FIELD_BREAKOUT), text('quantity', `${FIELD_BREAKOUT}2`)],
        provider: 'stripe',
        steps: [
          { name: text('reserveStock', BREAKOUT), compensation: text('releaseStock', `${BREAKOUT}2`) },
          { name: text('chargeCard', `${BREAKOUT}3`), provider: 'stripe' },
        ],
        source: text('src/orders.ts:10', TEXT_BREAKOUT),
        description: text('Places an order', TEXT_BREAKOUT),
        duplicateImpact: text('Two orders', TEXT_BREAKOUT),
      },
      {
        name: text('orderPaid', `${BREAKOUT}4`),
        trigger: 'webhook',
        route: `POST ${text('/webhooks/stripe', `${PATH_BREAKOUT}4`)}`,
        significantFields: [text('eventId', `${FIELD_BREAKOUT}4`)],
        key: { source: 'derived', from: [text('eventId', `${FIELD_BREAKOUT}4`)] },
      },
    ],
    stack: { language, framework, database: 'postgres', testFramework: 'vitest' },
    payments: ['stripe', 'adyen', 'paypal', 'bank-transfer'],
    concurrency: 'multi-instance',
    retention: '72h',
    detectionLatency: '50ms',
    scaffold: { dir: 'src/idempotency' },
  };
}

function scaffold(hostile: boolean, framework: Framework, language?: 'typescript' | 'javascript'): ScaffoldFile[] {
  const model = buildDesign(parseConfig(JSON.stringify(config(hostile, framework, language))), undefined, { now: NOW });
  return generateScaffold(model, { dir: 'src/idempotency', moduleType: 'module' });
}

/**
 * The shape of a file's syntax tree: node kinds in order, with names and string literals folded into one kind
 * (a quoted property name and a bare one are the same structure). Injected code would add nodes.
 */
function shape(file: ScaffoldFile): string[] {
  const source = ts.createSourceFile(file.path, file.contents, ts.ScriptTarget.Latest, true, file.path.endsWith('.js') ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const kinds: string[] = [];
  const visit = (node: ts.Node) => {
    const literal = ts.isIdentifier(node) || ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isPrivateIdentifier(node);
    kinds.push(literal ? 'NAME' : ts.SyntaxKind[node.kind]);
    node.forEachChild(visit);
  };
  visit(source);
  return kinds;
}

function diagnostics(file: ScaffoldFile): number {
  const source = ts.createSourceFile(file.path, file.contents, ts.ScriptTarget.Latest, true, file.path.endsWith('.js') ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  return (source as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length;
}

const code = (file: ScaffoldFile) => /\.(ts|js|mjs|cjs)$/.test(file.path);

describe.each([
  { framework: 'express' as const, language: 'typescript' as const },
  { framework: 'fastify' as const, language: 'typescript' as const },
  { framework: 'nestjs' as const, language: 'typescript' as const },
  { framework: 'koa' as const, language: 'typescript' as const },
  { framework: 'hono' as const, language: 'typescript' as const },
  { framework: 'nextjs' as const, language: 'typescript' as const },
  { framework: 'none' as const, language: 'typescript' as const },
  { framework: 'express' as const, language: 'javascript' as const },
])('config strings reach generated $language for $framework only as literals', ({ framework, language }) => {
  const plain = scaffold(false, framework, language);
  const hostile = scaffold(true, framework, language);

  it('produces the same files', () => {
    expect(hostile.map((file) => file.path)).toEqual(plain.map((file) => file.path));
  });

  it.each(plain.filter(code).map((file) => file.path))('%s: same syntax tree shape, no parse errors, every hostile name kept as data', (path) => {
    const before = plain.find((file) => file.path === path)!;
    const after = hostile.find((file) => file.path === path)!;
    expect(diagnostics(after)).toBe(0);
    expect(shape(after)).toEqual(shape(before));
    expect(after.contents).not.toMatch(/^\s*anything\(\);/m);
  });

  it('the hostile names are really there (the test would catch a renderer that drops them)', () => {
    const settings = hostile.find((file) => /settings\.(ts|js)$/.test(file.path))!;
    const source = ts.createSourceFile('settings.ts', settings.contents, ts.ScriptTarget.Latest, true);
    const strings: string[] = [];
    const visit = (node: ts.Node) => {
      if (ts.isStringLiteral(node)) strings.push(node.text);
      node.forEachChild(visit);
    };
    visit(source);
    expect(strings).toContain(BREAKOUT);
    expect(strings).toContain(PATH_BREAKOUT);
    expect(strings).toContain(FIELD_BREAKOUT);
  });
});
