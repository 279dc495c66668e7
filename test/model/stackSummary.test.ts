import { describe, expect, it } from 'vitest';
import { stackSummary } from '../../src/model/stackSummary.js';

describe('stackSummary', () => {
  const known = { agnostic: false, framework: 'fastify', frameworkLabel: 'Fastify', databaseLabel: 'MySQL', storeDatabase: 'mysql' } as const;

  it('names what is known, and the reference only for what is not', () => {
    expect(stackSummary(known)).toBe('Fastify on MySQL');
    // The shape of stripe/stripe-commercetools-connect-app@1c61c00: Fastify, no database in the code.
    expect(stackSummary({ ...known, agnostic: true, unknownParts: ['database'], databaseLabel: 'unknown', storeDatabase: 'postgres' })).toBe('Fastify, database unknown (PostgreSQL reference)');
    expect(stackSummary({ ...known, agnostic: true, unknownParts: ['framework'], frameworkLabel: 'unknown' })).toBe('MySQL, framework unknown');
    expect(stackSummary({ ...known, agnostic: true, unknownParts: ['framework', 'database'], storeDatabase: 'postgres' })).toBe('technology-agnostic (PostgreSQL reference)');
  });
});
