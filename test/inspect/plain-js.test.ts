import { describeFixtureInspection, endpoint, stackOf } from './fixtureInspection.js';

/** Plain JavaScript with require(): CommonJS routers, a stripe factory call, a unique-violation dedupe, and a file with a syntax error that is reported and still analysed. */
describeFixtureInspection('plain-js', {
  // Where the code creates its database client: apply's instance reads the same variables.
  stack: stackOf({ language: 'javascript', frameworks: ['express'], databases: ['mysql'], orms: ['mysql2'], payments: ['stripe'], testFramework: 'jest', packageManager: 'yarn', connections: [{ store: 'mysql', url: 'DATABASE_URL', file: 'lib/db.js', line: 2 }] }),
  findings: [
    endpoint('express', 'POST /broken', 'lib/broken.js:2', { prefixResolved: false }),
    endpoint('express', 'POST /donations', 'routes/donations.js:8', { insertsRecord: true, bodyFields: ['amount', 'donorEmail'], touchesPayment: true }),
    {
      kind: 'payment',
      id: 'stripe paymentIntents.create',
      file: 'routes/donations.js',
      line: 10,
      provider: 'stripe',
      operation: 'paymentIntents.create',
      hasProviderKey: false,
      risk: 'moves-money',
      httpMethod: 'POST',
      via: 'sdk',
    },
    {
      kind: 'existing-idempotency',
      id: 'unique-constraint treats unique violation ER_DUP_ENTRY as a duplicate',
      file: 'routes/donations.js',
      line: 14,
      mechanism: 'unique-constraint',
      detail: 'treats unique violation ER_DUP_ENTRY as a duplicate',
    },
  ],
  warnings: ["lib/broken.js:4: syntax error (',' expected.); analysed what could be parsed."],
});
