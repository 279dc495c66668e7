import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { LIMITS } from '../../src/config/limits.js';
import { UserError } from '../../src/errors.js';
import { rawFixture } from '../helpers/fixtures.js';

type Raw = Record<string, unknown>;
const base = (): Raw => rawFixture('minimal-one-action');
const firstAction = (raw: Raw) => (raw['actions'] as Raw[])[0]!;

function errorFor(raw: unknown): string {
  try {
    parseConfig(typeof raw === 'string' ? raw : JSON.stringify(raw), 'idempotency.config.json');
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    return (error as UserError).message;
  }
  throw new Error('expected the config to be rejected');
}

const withAction = (patch: Raw): Raw => {
  const raw = base();
  Object.assign(firstAction(raw), patch);
  return raw;
};

describe('config limits', () => {
  it('rejects a retention that would overflow to Infinity, and one beyond ten years, naming the range', () => {
    expect(errorFor({ ...base(), retention: `1${'0'.repeat(300)}d` })).toMatch(/retention: found "1000.*; expected a duration between 1m and 3650d/);
    expect(errorFor({ ...base(), retention: '3651d' })).toContain('retention: found "3651d"; expected a duration between 1m and 3650d');
    expect(errorFor({ ...base(), retention: '0ms' })).toContain('retention: found "0ms"');
    expect(errorFor({ ...base(), detectionLatency: '2h' })).toContain('detectionLatency: found "2h"; expected a duration between 1ms and 1h');
    expect(() => parseConfig(JSON.stringify({ ...base(), retention: '3650d', detectionLatency: '1h' }))).not.toThrow();
  });

  it('bounds the number of actions, steps and fields with the path and what to do', () => {
    const action = firstAction(base());
    const many = Array.from({ length: LIMITS.actions + 1 }, (_, i) => ({ ...action, name: `action${i}` }));
    expect(errorFor({ ...base(), actions: many })).toContain(`actions: found [${LIMITS.actions + 1} items]; expected at most ${LIMITS.actions} item(s); the limit keeps generation fast`);
    const steps = (n: number, prefix = 'step') => Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}` }));
    expect(errorFor(withAction({ steps: steps(LIMITS.stepsPerSaga + 1) }))).toContain(`actions[0].steps: found [${LIMITS.stepsPerSaga + 1} items]; expected at most ${LIMITS.stepsPerSaga}`);
    const sagas = Array.from({ length: Math.ceil((LIMITS.totalSteps + 1) / LIMITS.stepsPerSaga) }, (_, i) => ({ ...action, name: `saga${i}`, steps: steps(LIMITS.stepsPerSaga) }));
    expect(errorFor({ ...base(), actions: sagas })).toMatch(new RegExp(`actions: .*expected at most ${LIMITS.totalSteps} saga steps over all actions`));
    expect(errorFor(withAction({ significantFields: Array.from({ length: LIMITS.significantFields + 1 }, (_, i) => `f${i}`) }))).toContain('actions[0].significantFields: found [');
    expect(errorFor(withAction({ name: 'x'.repeat(LIMITS.nameLength + 1) }))).toContain(`actions[0].name: found "xxx`);
    expect(errorFor(withAction({ volumePerDay: 1e300 }))).toContain('actions[0].volumePerDay: found 1e+300; expected at most');
  });

  it('refuses names a document or a program cannot carry, with the reason', () => {
    expect(errorFor(withAction({ name: '1234' }))).toContain('actions[0].name: found "1234"; expected a name with at least one letter');
    expect(errorFor(withAction({ name: '---' }))).toContain('at least one letter');
    expect(errorFor(withAction({ name: 'pay\u2028ment' }))).toContain('actions[0].name: found "pay\u2028ment"; expected a name without control, format or separator characters');
    expect(errorFor(withAction({ name: 'pay\u202Etnem' }))).toContain('without control, format or separator');
    expect(errorFor(withAction({ name: 'pay\u001b[31mment' }))).toContain('actions[0].name: found "pay\\u001b[31mment"');
    for (const name of ['__proto__', 'constructor', 'prototype']) expect(errorFor(withAction({ name }))).toContain('expected a name other than __proto__, constructor or prototype');
    for (const field of ['__proto__', 'items[].constructor', 'a.prototype.b']) expect(errorFor(withAction({ significantFields: [field] }))).toContain('actions[0].significantFields[0]');
    expect(errorFor(withAction({ description: 'line\u2029break' }))).toContain('actions[0].description');
    // Letters in any script are names.
    expect(() => parseConfig(JSON.stringify(withAction({ name: 'créerPaiement', steps: [{ name: '支払い' }] })))).not.toThrow();
  });

  it('refuses a JSON document nested too deep before parsing it, naming where', () => {
    const deep = `{"assumptions":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const message = errorFor(deep);
    expect(message).toContain(`assumptions${'[0]'.repeat(LIMITS.jsonDepth - 1)}: nested more than ${LIMITS.jsonDepth} levels deep`);
    expect(errorFor(`{"a":{"b c":${'{"x":'.repeat(100)}1${'}'.repeat(100)}}}`)).toContain('a["b c"].x.x');
  });

  it('quotes unknown keys so control characters never reach the terminal', () => {
    expect(errorFor({ ...base(), 'x\u001b[2J': 1 })).toContain('["x\\u001b[2J"]: unknown key');
  });

  it('keeps output and scaffold paths inside the project, and output a document', () => {
    expect(errorFor({ ...base(), output: '../elsewhere/design.html' })).toContain('output: found "../elsewhere/design.html"; expected a path inside the project');
    expect(errorFor({ ...base(), output: '/tmp/design.html' })).toContain('expected a path inside the project');
    expect(errorFor({ ...base(), output: 'docs/design' })).toContain('output: found "docs/design"; expected a path ending in .html or .md');
    expect(errorFor({ ...base(), scaffold: { dir: 'src/../../outside' } })).toContain('scaffold.dir: found "src/../../outside"; expected a path inside the project');
    expect(errorFor({ ...base(), scaffold: { dir: 'C:\\temp' } })).toContain('scaffold.dir');
    expect(errorFor({ ...base(), scaffold: { dir: './' } })).toContain('expected a path below the project root');
    expect(() => parseConfig(JSON.stringify({ ...base(), output: 'docs/./design.md', scaffold: { dir: 'src/a/../idempotency' } }))).not.toThrow();
  });
});
