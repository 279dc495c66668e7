#!/usr/bin/env node
// Shim: refuse old Node with a clear message, then hand over to the built CLI.
const [major] = process.versions.node.split('.').map(Number);
if (major < 20) {
  process.stderr.write(`idempotency-builder needs Node.js 20 or newer (found ${process.versions.node}).\n`);
  process.exit(2);
}
// Output piped into a reader that stops early (`idempotency-builder inspect | head`): stop quietly, as other CLIs do,
// instead of dying on an unhandled EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}
const { main } = await import('../dist/cli/main.js');
await main(process.argv);
