import fc from 'fast-check';
import { fieldText, nameText, safeText } from '../../src/config/text.js';
import { BROKERS, CONCURRENCY, DATABASES, FORMATS, FRAMEWORKS, KEY_SOURCES, LANGUAGES, PROVIDERS, RETRY_SOURCES, SCOPES, SPLITS, TEST_FRAMEWORKS, TRIGGERS } from '../../src/config/schema.js';

/**
 * Configs as a user (or an attacker) could write them: mostly well-formed, with names and texts drawn from
 * hostile samples (quotes, markup, Markdown syntax, separators, other scripts) and from arbitrary Unicode.
 * `mutatedConfig` then breaks one part of some of them, so both the accept and the reject paths are exercised.
 */
// Hostile but valid: each must come out escaped in prose, tables, anchors and code.
const HOSTILE_VALID = [
  "x'); anything(); ('",
  '"; DROP TABLE idempotency_keys; --',
  '</code></pre><script>alert(1)</script>',
  'a-->b',
  'a]]>',
  '__init__',
  '_a_',
  '*bold*',
  '`tick`',
  '[link](javascript:alert(1))',
  '<img src=x onerror=alert(1)>',
  '| pipe |',
  '# heading',
  'a\\b',
  '${process.exit()}',
  '{{title}}',
  'créerPaiement',
  'платёж',
  '支払い',
  'دفع',
  'pay 💳',
  'a'.repeat(100),
  'Create Payment',
  'create-payment',
  'x&amp;y',
  'a\u00a0b',
];
// Each is refused by the schema; mutations plant them anywhere.
const HOSTILE_INVALID = ['pay\u2028ment', '\u202Eevil', 'x\u0000y', '1234', '---', '__proto__', 'constructor', 'a'.repeat(101), '', ' ', '3651d', `1${'0'.repeat(300)}d`, '../out.html', '/etc', 'design'];

const word = fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,14}$/);
const isName = (text: string) => nameText.safeParse(text).success;
const isField = (text: string) => fieldText.safeParse(text).success;
const isText = (text: string) => safeText().safeParse(text).success;

export const nameArb = fc.oneof(
  { weight: 5, arbitrary: word },
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_VALID) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }).filter(isName) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }).filter(isName) },
);
const fieldArb = fc.oneof(
  { weight: 5, arbitrary: word },
  { weight: 1, arbitrary: fc.tuple(word, word).map(([a, b]) => `${a}[].${b}`) },
  { weight: 1, arbitrary: fc.constantFrom('<b>', "it's", 'a|b', '`x`', '__init__', 'a.b.c', 'x[]', '$ref', 'toString', 'hasOwnProperty') },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter(isField) },
);
const textArb = fc.oneof(fc.string({ maxLength: 40 }).filter(isText), fc.constantFrom(...HOSTILE_VALID), fc.string({ unit: 'grapheme', maxLength: 40 }).filter(isText));
const routeArb = fc.oneof(
  fc.tuple(fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE', 'post'), fc.array(fc.oneof(word, fc.constant(':id')), { minLength: 1, maxLength: 3 })).map(([m, parts]) => `${m} /${parts.join('/')}`),
  fc.constantFrom('orders.created', '*/5 * * * *', 'POST /x?a=<b>', "POST /a'b", '0 3 * * *'),
  textArb.filter((text) => text.length > 0),
);
const retentionArb = fc.oneof(
  fc.tuple(fc.integer({ min: 1, max: 3650 }), fc.constantFrom('m', 'h', 'd')).map(([n, u]) => `${n}${u}`),
  fc.constantFrom('72h', '1m', '3650d', '1.5h', '60s', '60000ms'),
);
const latencyArb = fc.oneof(
  fc.tuple(fc.integer({ min: 1, max: 3600 }), fc.constantFrom('ms', 's')).map(([n, u]) => `${n}${u}`),
  fc.constantFrom('1ms', '1h', '60m', '0.5s'),
);
const subset = <T>(values: readonly T[]) => fc.subarray([...values]);

const stepArb = fc.record(
  { name: nameArb, compensation: nameArb, provider: fc.constantFrom(...PROVIDERS) },
  { requiredKeys: ['name'] },
);

const actionArb = fc.record(
  {
    name: nameArb,
    trigger: fc.constantFrom(...TRIGGERS),
    route: routeArb,
    significantFields: fc.array(fieldArb, { minLength: 1, maxLength: 4 }),
    provider: fc.constantFrom(...PROVIDERS),
    steps: fc.uniqueArray(stepArb, { maxLength: 4, selector: (step) => step.name }),
    expectedDurationMs: fc.integer({ min: 1, max: 86_400_000 }),
    source: textArb,
    description: textArb,
    duplicateImpact: textArb,
    scope: fc.constantFrom(...SCOPES),
    key: fc.record({ source: fc.constantFrom(...KEY_SOURCES), from: fc.array(fieldArb, { minLength: 1, maxLength: 3 }), bits: fc.integer({ min: 8, max: 512 }) }, { requiredKeys: ['source', 'from'] }),
    volumePerDay: fc.oneof(fc.integer({ min: 1, max: 10_000_000 }), fc.constant(1e12)),
  },
  { requiredKeys: ['name', 'trigger', 'significantFields'] },
);

/** Configs the schema must accept, built from hostile-but-valid values. */
export const configArb = fc.record(
  {
    title: textArb.filter((text) => text.length > 0),
    format: fc.constantFrom(...FORMATS),
    output: fc.constantFrom('docs/design.html', 'docs/design.md', 'docs/ünïcode design.md', 'a/b/c/d.html', 'design.html', 'docs/./x/../design.md'),
    split: fc.constantFrom(...SPLITS),
    actions: fc.uniqueArray(actionArb, { minLength: 1, maxLength: 5, selector: (action) => action.name }),
    stack: fc.record({
      language: fc.constantFrom(...LANGUAGES),
      framework: fc.constantFrom(...FRAMEWORKS),
      database: fc.constantFrom(...DATABASES),
      broker: fc.constantFrom(...BROKERS),
      testFramework: fc.constantFrom(...TEST_FRAMEWORKS),
    }),
    retrySources: subset(RETRY_SOURCES),
    payments: subset(PROVIDERS),
    concurrency: fc.constantFrom(...CONCURRENCY),
    retention: retentionArb,
    detectionLatency: latencyArb,
    scaffold: fc.oneof(fc.constant(false), fc.constantFrom({ dir: 'src/idempotency' }, { dir: 'lib/idem' }, { dir: 'src/a/../idempotency' })),
    conflictStatus: fc.constantFrom(422, 409),
    inFlight: fc.constantFrom('reject', 'wait'),
    expectedVolumePerDay: fc.integer({ min: 1, max: 1_000_000_000 }),
    assumptions: fc.array(textArb.filter((text) => text.length > 0), { maxLength: 3 }),
  },
  { requiredKeys: ['actions', 'stack', 'concurrency', 'retention', 'detectionLatency'] },
);

/** Replaces the value at one path (chosen by `pick`) with arbitrary JSON, or deletes it. */
function mutate(config: Record<string, unknown>, pick: number, replacement: unknown, remove: boolean): unknown {
  const paths: Array<Array<string | number>> = [];
  const walk = (value: unknown, at: Array<string | number>) => {
    paths.push(at);
    if (Array.isArray(value)) value.forEach((item, i) => walk(item, [...at, i]));
    else if (value && typeof value === 'object') for (const key of Object.keys(value)) walk((value as Record<string, unknown>)[key], [...at, key]);
  };
  walk(config, []);
  const target = paths[pick % paths.length]!;
  if (target.length === 0) return replacement;
  const copy = structuredClone(config);
  let parent: unknown = copy;
  for (const segment of target.slice(0, -1)) parent = (parent as Record<string | number, unknown>)[segment];
  const last = target[target.length - 1]!;
  if (remove && !Array.isArray(parent)) delete (parent as Record<string, unknown>)[last as string];
  else (parent as Record<string | number, unknown>)[last] = replacement;
  return copy;
}

// Deep nesting is planted in the text: as a JavaScript value it would overflow JSON.stringify in the test itself.
const DEEP_MARK = 'deep-nesting-goes-here';
const deepValue = fc.integer({ min: 33, max: 100_000 }).map((depth) => ({ [DEEP_MARK]: depth }));
const plantDeep = (text: string) =>
  text.replace(new RegExp(`\\{"${DEEP_MARK}":(\\d+)\\}`, 'g'), (_whole, depth: string) => `${'['.repeat(Number(depth))}${']'.repeat(Number(depth))}`);

/** The config as text: about half unchanged (valid), the rest with one value replaced, removed or nested absurdly deep, or an extra key. */
export const configTextArb = fc
  .tuple(
    configArb,
    fc.oneof(
      { weight: 4, arbitrary: fc.constant(undefined) },
      {
        weight: 3,
        arbitrary: fc.record({
          pick: fc.nat(),
          replacement: fc.oneof(fc.jsonValue({ maxDepth: 3 }), deepValue, fc.constantFrom(...HOSTILE_INVALID, null, 1e308, -0, 0, -1, 1.5, true, [], {})),
          remove: fc.boolean(),
        }),
      },
      { weight: 1, arbitrary: fc.record({ key: fc.constantFrom('__proto__', 'constructor', 'x\u001b[2J', 'retentoin'), value: fc.jsonValue({ maxDepth: 2 }) }) },
    ),
  )
  .map(([config, change]) => {
    if (change === undefined) return JSON.stringify(config);
    if ('pick' in change) return plantDeep(JSON.stringify(mutate(config, change.pick, change.replacement, change.remove)));
    // Own keys such as "__proto__" only exist in the text, never through an assignment.
    return `${JSON.stringify(config).slice(0, -1)},${JSON.stringify(change.key)}:${JSON.stringify(change.value)}}`;
  });
