import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ts } from 'ts-morph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { compile, copyFixture, snapshotTree, type FixtureCopy } from './fixtureApp.js';

interface IntentKey {
  key(): string;
  settle<T>(outcome: T): T;
  fail(error: unknown): never;
}

/** Parse errors of a JSX module, as a bundler would report them ('' when it parses). */
function parseErrors(file: string, text: string): string {
  const out = ts.transpileModule(text, { fileName: file, reportDiagnostics: true, compilerOptions: { jsx: ts.JsxEmit.Preserve, module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  return (out.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n');
}

/**
 * Issue #19, client side outside Next.js (stripe-samples/accept-a-payment@1a57c3b2's layout): an Express API in
 * server/ and a Vite React app in client/, two packages with no root one. The components that call the protected
 * route, with fetch behind the dev proxy's /api prefix and with an axios instance from the app's own module, send one
 * key per intent from a hook apply writes into the client's own source folder, in its language.
 */
describe('apply wires the React callers of an Express route in a separate frontend package', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  beforeAll(async () => {
    copy = await copyFixture('express-react-client');
  }, 120_000);
  afterAll(async () => {
    await copy?.remove();
  });

  it('keys the fetch and the axios call, writes the hook as JavaScript in client/src/idempotency, and changes nothing the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    const read = (file: string) => readFile(path.join(copy.dir, file), 'utf8');

    // The server's package is an ES module one whose tsconfig is NodeNext: its imports of the scaffold carry .js.
    const app = await read('server/src/app.ts');
    expect(app).toContain("import { idempotency } from './idempotency/instance.js';");
    expect(app).toContain("app.post('/checkout', idempotency.createCheckout, async (req, res) => {");

    const checkout = await read('client/src/Checkout.jsx');
    // No relative import in the file to copy: the package is an ES module one, so the specifier carries .js (Vite resolves it).
    expect(checkout).toContain("import { useIdempotencyKey } from './idempotency/useIdempotencyKey.js';");
    expect(checkout).toContain('  const createCheckoutIntent = useIdempotencyKey();\n');
    expect(checkout).toContain("headers: { 'Content-Type': 'application/json', 'Idempotency-Key': createCheckoutIntent.key() },");
    expect(checkout).toContain('}).then(createCheckoutIntent.settle);');
    const reorder = await read('client/src/Reorder.jsx');
    expect(reorder).toContain("const again = () => api.post('/checkout', { items }, { headers: { 'Idempotency-Key': createCheckoutIntent.key() } }).then(createCheckoutIntent.settle, createCheckoutIntent.fail);");
    for (const [file, text] of [['Checkout.jsx', checkout], ['Reorder.jsx', reorder]] as const) expect(parseErrors(file, text), file).toBe('');

    // The hook, in the client's language; the API's compiled tree never sees React.
    const hook = await read('client/src/idempotency/useIdempotencyKey.js');
    expect(hook).toContain("import { useRef } from 'react';");
    expect(hook).not.toMatch(/: IntentKey|<IntentKey/);
    const { createIntentKey } = (await import(pathToFileURL(path.join(copy.dir, 'client/src/idempotency/intentKey.js')).href)) as { createIntentKey: (generate?: () => string) => IntentKey };
    let n = 0;
    const intent = createIntentKey(() => `key-${++n}`);
    expect(intent.key()).toBe('key-1');
    await expect(Promise.reject(Object.assign(new Error('busy'), { response: { status: 409 } })).then(intent.settle, intent.fail)).rejects.toThrow('busy');
    expect(intent.key()).toBe('key-1');
    intent.settle({ status: 201 });
    expect(intent.key()).toBe('key-2');

    // Callers were found and wired: no step asks for them; the summaries name each component.
    expect(first.manual.filter((m) => m.reason.includes('callers must now send'))).toEqual([]);
    // The API answers preflights with its own header list: the frontend's keyed requests would be refused there.
    expect(first.manual.filter((m) => m.reason.includes('CORS')).map((m) => `${m.file}:${m.line}`)).toEqual(['server/src/app.ts:12']);
    expect(first.edits.map((e) => `${e.file}: ${e.summary}`)).toEqual(
      expect.arrayContaining([
        'client/src/Checkout.jsx: Checkout sends the Idempotency-Key header from useIdempotencyKey() to POST /checkout (line 7)',
        'client/src/Reorder.jsx: Reorder sends the Idempotency-Key header from useIdempotencyKey() to POST /checkout (line 4)',
        'client/src/idempotency/useIdempotencyKey.js: creates the useIdempotencyKey() hook: one key per user intent, reused on retry',
      ]),
    );
    expect(await compile(path.join(copy.dir, 'server'))).toBe('');

    const tree = await snapshotTree(copy.dir);
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(await snapshotTree(copy.dir)).toEqual(tree);
  });
});
