import { describeAdapterScaffold } from './adapterScaffold.js';

await describeAdapterScaffold({
  framework: 'none',
  module: 'plain',
  firstImport: "import { createIdempotency, createPool, POLICY } from './idempotency/index.js';",
  testImport: "from './plain.js'",
});
