import { describe, expect, it } from 'vitest';
import { withTransactionalModes } from '../../src/apply/claimWrites.js';
import { describeClaimWrites, MYSQL, POSTGRES, serveListening } from './claimWritesSuite.js';

describe('withTransactionalModes', () => {
  it('adds the mode next to the name, keeping the rest of the text, and refuses an ambiguous name', () => {
    const text = '{\n  "actions": [\n    {\n      "name": "a",\n      "trigger": "http"\n    },\n    { "name": "b", "trigger": "http" }\n  ]\n}\n';
    expect(withTransactionalModes(text, ['a'])).toBe('{\n  "actions": [\n    {\n      "name": "a",\n      "mode": "transactional",\n      "trigger": "http"\n    },\n    { "name": "b", "trigger": "http" }\n  ]\n}\n');
    expect(withTransactionalModes(text, ['b'])).toBe('{\n  "actions": [\n    {\n      "name": "a",\n      "trigger": "http"\n    },\n    { "name": "b", "mode": "transactional", "trigger": "http" }\n  ]\n}\n');
    expect(withTransactionalModes('{ "actions": [{ "name": "a" }, { "name": "a" }] }', ['a'])).toBeUndefined();
  });
});

// The Express fixture app on each store the narrow case covers (the other frameworks: claimWritesFrameworks.test.ts).
await describeClaimWrites({ label: 'Express', fixture: 'express-claim-writes', store: POSTGRES, binding: 'const db = transactionOf(idempotencyOf(req)) ?? pool;', serve: serveListening });
await describeClaimWrites({ label: 'Express', fixture: 'express-claim-writes-mysql', store: MYSQL, binding: 'const db = transactionOf(idempotencyOf(req)) ?? pool;', serve: serveListening });
