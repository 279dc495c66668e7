import { describe, expect, it } from 'vitest';
import { readField } from '../../templates/scaffold/typescript/core/fingerprint.js';

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
