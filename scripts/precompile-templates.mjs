// Precompiles the verbatim scaffold templates to house-style JavaScript (both module formats) into
// dist/scaffold/javascript/precompiled.json, and the test suites' pieces into dist/scaffold/javascript/suites/, so a
// JavaScript generate neither transpiles nor formats (see src/scaffold/javascript/precompiled.ts). Runs after tsc in
// `npm run build`.
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildPrecompiledTable, buildProfileTable, buildSuiteTables, precompiledKey, suiteBucket } from '../dist/scaffold/javascript/precompiled.js';
import { adaptedSuites, renderedSuites, suitesWithHoles } from '../dist/scaffold/javascript/renderedSuites.js';

// Each store's store-contract.test.ts is rendered, but the same for every design: precompiled too.
const templates = fileURLToPath(new URL('../templates/scaffold/typescript/', import.meta.url));
const table = await buildPrecompiledTable(templates, undefined, renderedSuites());
const write = (file, entries) => writeFile(new URL(`../dist/scaffold/javascript/${file}`, import.meta.url), `${JSON.stringify({ files: Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : 1))) })}\n`);
await write('precompiled.json', table);
// The test suites (idempotency.test.ts depends on the design: its pieces between the values; the suites adapted to
// jest, mocha and node:test), one table per runner and module format (suiteJavaScript.ts).
await mkdir(new URL('../dist/scaffold/javascript/suites/', import.meta.url), { recursive: true });
const adapted = adaptedSuites();
const suiteTables = await buildSuiteTables(suitesWithHoles(), adapted);
for (const [bucket, entries] of suiteTables) await write(`suites/${bucket}.json`, entries);
// Every whole file above under an old Jest's profile, where its edits change prettier's layout (javascriptProfile.ts).
const adaptedJavaScript = adapted.flatMap(({ source, runner }) =>
  ['module', 'commonjs'].map((moduleType) => suiteTables.get(suiteBucket(runner, moduleType))?.get(precompiledKey(source, moduleType, 'file'))),
);
await write('jest-profiles.json', await buildProfileTable([...table.values(), ...adaptedJavaScript.filter((javascript) => javascript !== undefined)]));
