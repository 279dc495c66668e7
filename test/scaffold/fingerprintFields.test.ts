import { describe, expect, it } from 'vitest';
import { computeFingerprint, pickFields, readField } from '../../templates/scaffold/typescript/core/fingerprint.js';

// readField is written without flatMap (ES2019) so projects with an older lib compile it: the same reads as before.
describe('readField (the fingerprint template)', () => {
  const body = { amount: { value: 12 }, items: [{ sku: 'a', tags: ['x', 'y'] }, { sku: 'b', tags: [] }, { other: 1 }], empty: null };

  it('reads plain and nested paths; a missing field or a prototype property is null', () => {
    expect(readField(body, 'amount.value')).toBe(12);
    expect(readField(body, 'amount.currency')).toBeNull();
    expect(readField(body, 'empty.value')).toBeNull();
    expect(readField(body, 'toString')).toBeNull();
  });

  it('maps over arrays with [] (nested too), missing entries read as null, a non-array maps to nothing', () => {
    expect(readField(body, 'items[].sku')).toEqual(['a', 'b', null]);
    expect(readField(body, 'items[].tags[]')).toEqual(['x', 'y']);
    expect(readField(body, 'amount[].value')).toEqual([]);
  });
});

describe('pickFields (the fingerprint template)', () => {
  const fingerprint = (body: unknown, fields = ['body']) =>
    computeFingerprint({ method: 'POST', route: '/tasks', fields: pickFields(fields, { params: {}, body, query: {} }) });

  it('"body" (the fallback when no fields were named) is the whole body: a reused key with another body mismatches', () => {
    expect(pickFields(['body'], { params: {}, body: { name: 'write report', done: false }, query: {} })).toEqual({ body: { name: 'write report', done: false } });
    expect(fingerprint({ name: 'write report', done: false })).not.toBe(fingerprint({ name: 'file taxes', done: false }));
    expect(fingerprint({ done: false, name: 'write report' })).toBe(fingerprint({ name: 'write report', done: false }));
  });

  it('a body with a field of its own named "body" (a note\'s text) is fingerprinted by that field', () => {
    expect(pickFields(['body'], { params: {}, body: { title: 'Groceries', body: 'milk, eggs' }, query: {} })).toEqual({ body: 'milk, eggs' });
    expect(fingerprint({ title: 'Groceries', body: 'milk' }, ['body'])).toBe(fingerprint({ title: 'Shopping', body: 'milk' }, ['body']));
  });
});
