// Precompiles the verbatim scaffold templates to house-style JavaScript (both module formats) into
// dist/scaffold/javascript/precompiled.json, so a JavaScript generate transpiles and formats only what it renders
// (see src/scaffold/javascript/precompiled.ts). Runs after tsc in `npm run build`.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildPrecompiledTable } from '../dist/scaffold/javascript/precompiled.js';
import { adaptedSuites, renderedSuites, suitesWithHoles } from '../dist/scaffold/javascript/renderedSuites.js';

// Each store's store-contract.test.ts is rendered, but the same for every design: precompiled too.
const templates = fileURLToPath(new URL('../templates/scaffold/typescript/', import.meta.url));
// idempotency.test.ts depends on the design: its pieces between the values, precompiled (suiteJavaScript.ts).
const table = await buildPrecompiledTable(templates, undefined, renderedSuites(), suitesWithHoles(), adaptedSuites());
const files = Object.fromEntries([...table].sort(([a], [b]) => (a < b ? -1 : 1)));
await writeFile(new URL('../dist/scaffold/javascript/precompiled.json', import.meta.url), `${JSON.stringify({ files })}\n`);
