import { describe, expect, it } from 'vitest';
import { ts } from 'ts-morph';
import { parseSource } from '../../src/inspect/parse/parseSource.js';
import { perAttemptValue } from '../../src/findings/volatile.js';

/** perAttemptValue of the argument of `key(…)` on the handler's last line, with `setup` before it. */
function judge(value: string, setup = ''): string | undefined {
  const text = `const RUN_ID = randomUUID();\nexport async function handle(event, row) {\n${setup}\n  await key(${value});\n}\n`;
  const { sf } = parseSource('src/handler.ts', text);
  let arg: ts.Expression | undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.getText(sf) === 'key') arg = node.arguments[0];
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return perAttemptValue(arg!);
}

describe('perAttemptValue: is this value made fresh on each attempt', () => {
  it('ids, clocks and random numbers called in place', () => {
    const calls = ['randomUUID()', 'crypto.randomUUID()', 'uuid()', 'v4()', 'uuidv4()', 'uuid.v4()', 'nanoid()', 'cuid()', 'createId()', 'ulid()', 'Date.now()', 'Math.random()'];
    expect(calls.map((c) => judge(c))).toEqual(calls);
    expect(judge('new Date()')).toBe('new Date()');
    expect(judge('new ObjectId()')).toBe('new ObjectId()');
    expect(judge('new ObjectId().toHexString()')).toBe('new ObjectId()');
    expect(judge('nanoid(12)')).toBe('nanoid(…)');
    expect(judge('`evt:${randomUUID()}`')).toBe('randomUUID()');
    expect(judge("'evt:' + Date.now()")).toBe('Date.now()');
    expect(judge('String(Date.now())')).toBe('Date.now()');
  });

  it('through a const of the same function, or a property of a local object literal', () => {
    expect(judge('id', '  const id = randomUUID();')).toBe('randomUUID()');
    expect(judge('key', '  const id = ulid();\n  const key = `evt:${id}`;')).toBe('ulid()');
    expect(judge('entry.id', '  const entry = { id: cuid(), eventId: event.id };')).toBe('cuid()');
  });

  it('not: the event id, input, a parsed value, a module-level const, a reassignable let, a given date, a const of another function', () => {
    expect(judge('event.id')).toBeUndefined();
    expect(judge('`evt:${event.id}`')).toBeUndefined();
    expect(judge('row.id')).toBeUndefined();
    expect(judge('entry.eventId', '  const entry = { id: cuid(), eventId: event.id };')).toBeUndefined();
    expect(judge('parsed.id', '  const parsed = JSON.parse(event.body, Date.now());')).toBeUndefined();
    expect(judge('RUN_ID')).toBeUndefined();
    expect(judge('id', '  let id = randomUUID();\n  if (event.id) id = event.id;')).toBeUndefined();
    expect(judge('new Date(event.created * 1000)')).toBeUndefined();
    expect(judge('new ObjectId(event.id)')).toBeUndefined();
    expect(judge('id', '  const later = () => { const id = randomUUID(); return id; };\n  const id = event.id;')).toBeUndefined();
  });
});
