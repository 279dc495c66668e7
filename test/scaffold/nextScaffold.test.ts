import { describeAdapterScaffold } from './adapterScaffold.js';

await describeAdapterScaffold({
  framework: 'nextjs',
  module: 'next',
  firstImport: "import { createIdempotency, createPool, POLICY } from './idempotency/index.js';",
  testImport: "from './next.js'",
});
