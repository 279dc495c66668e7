#!/usr/bin/env node
// Shim: refuse old Node with a clear message, then hand over to the built CLI.
const [major] = process.versions.node.split('.').map(Number);
if (major < 20) {
  process.stderr.write(`idempotency-builder needs Node.js 20 or newer (found ${process.versions.node}).\n`);
  process.exit(2);
}
const { main } = await import('../dist/cli/main.js');
await main(process.argv);
