import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFigures } from '../../src/diagrams/index.js';
import { esmBundleAsScript, loadBeautifulMermaid } from '../../src/diagrams/renderers/loadBeautifulMermaid.js';
import { codeCacheFile, compileWithCodeCache, toolCacheDir } from '../../src/diagrams/renderers/v8CodeCache.js';
import { renderBeautifulMermaid } from '../../src/diagrams/renderers/beautifulMermaid.js';
import { expressStripe, hostileNames, nestjsAdyenSaga } from './models.js';

let scratch: string;
const savedXdg = process.env['XDG_CACHE_HOME'];

beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'ib-v8-cache-'));
  // The layout engine's code cache lands in this test's own folder, not the user's.
  process.env['XDG_CACHE_HOME'] = path.join(scratch, 'xdg');
});

afterAll(() => {
  if (savedXdg === undefined) delete process.env['XDG_CACHE_HOME'];
  else process.env['XDG_CACHE_HOME'] = savedXdg;
  rmSync(scratch, { recursive: true, force: true });
});

describe('beautiful-mermaid loaded as scripts through the V8 code cache', () => {
  it('lays out byte-identical SVG to the plain import, and leaves its code cache in the user cache folder', async () => {
    const engine = await loadBeautifulMermaid();
    expect(engine.loadedAs).toBe('scripts');
    const { renderMermaidSVG } = await import('beautiful-mermaid');
    const figures = [...buildFigures(nestjsAdyenSaga), ...buildFigures(expressStripe), ...buildFigures(hostileNames)];
    for (const figure of figures) {
      const meta = { id: figure.id, title: figure.title, desc: figure.caption };
      expect(renderBeautifulMermaid(engine.renderMermaidSVG, figure.mermaid, meta)).toBe(renderBeautifulMermaid(renderMermaidSVG, figure.mermaid, meta));
    }
    engine.saveCodeCache();
    const entries = readdirSync(path.join(scratch, 'xdg', 'idempotency-builder', 'v8'));
    expect(entries.some((name) => /^elk\.bundled\.js-[0-9a-f]{32}\.bin$/.test(name))).toBe(true);
    expect(entries.some((name) => /^index\.js-[0-9a-f]{32}\.bin$/.test(name))).toBe(true);
    expect(entries.filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});

describe('esmBundleAsScript', () => {
  const run = (source: string, imports: unknown[]) => {
    const shape = esmBundleAsScript(source)!;
    return { shape, exports: (new Function(`return ${shape.wrapped}`)() as (imports: unknown) => Record<string, unknown>)(imports) };
  };

  it('turns hoisted imports into bindings and the final export list into the returned object', () => {
    const source = 'var early = () => pick(1);\nimport { decode, escape as esc } from "entities";\nimport Layout from "elkjs/lib/elk.bundled.js";\nfunction pick(x) { return [decode(x), esc(x), new Layout().name]; }\nexport {\n  early,\n  pick as choose\n};\n//# sourceMappingURL=index.js.map\n';
    class Layout {
      name = 'elk';
    }
    const { shape, exports } = run(source, [{ named: { decode: (x: number) => x + 1, escape: (x: number) => x + 2 } }, { default: Layout }]);
    expect(shape.specifiers).toEqual(['entities', 'elkjs/lib/elk.bundled.js']);
    expect(Object.keys(exports)).toEqual(['early', 'choose']);
    expect((exports['early'] as () => unknown)()).toEqual([2, 3, 'elk']);
  });

  it('refuses shapes it cannot run the same way, so the plain import handles them', () => {
    expect(esmBundleAsScript('const a = 1;\n')).toBeUndefined();
    expect(esmBundleAsScript('const a = 1;\nexport {\n  a\n};\nconsole.log(a);\n')).toBeUndefined();
    expect(esmBundleAsScript('const a = import.meta.url;\nexport {\n  a\n};\n')).toBeUndefined();
    expect(esmBundleAsScript('const a = () => import("x");\nexport {\n  a\n};\n')).toBeUndefined();
    expect(esmBundleAsScript('import * as all from "x";\nconst a = all;\nexport {\n  a\n};\n')).toBeUndefined();
    expect(esmBundleAsScript('export default 1;\nconst a = 1;\nexport {\n  a\n};\n')).toBeUndefined();
  });
});

describe('compileWithCodeCache', () => {
  // Each case compiles its own source: V8 also keeps compiled scripts per thread, which would hide the disk entry.
  const sourceNumber = (n: number) => `(function () { ${Array.from({ length: 200 }, (_, i) => `function f${i}(x) { return x * ${i} + ${n}; }`).join('\n')} return f199(2); })`;
  const source = sourceNumber(0);
  /** Whether a fresh thread (an isolate of its own, like the next run) accepts the saved entry for `text`. */
  const acceptedElsewhere = (text: string, entry: string) =>
    new Promise<boolean>((resolve, reject) => {
      const code = `const { parentPort, workerData } = require('node:worker_threads'); const vm = require('node:vm');
        const script = new vm.Script(workerData.text, { filename: 'bundle.js', cachedData: require('node:fs').readFileSync(workerData.entry) });
        parentPort.postMessage(script.cachedDataRejected === false);`;
      const worker = new Worker(code, { eval: true, workerData: { text, entry } });
      worker.once('message', (accepted: boolean) => {
        resolve(accepted);
        void worker.terminate();
      });
      worker.once('error', reject);
    });

  it('saves what V8 compiled, in an entry the next run starts from, named by the source and not its path', async () => {
    const dir = path.join(scratch, 'cache-a');
    const first = compileWithCodeCache('/pkg/bundle.js', sourceNumber(1), dir);
    expect(first.fromCache).toBe(false);
    expect((first.script.runInThisContext() as () => number)()).toBe(199 * 2 + 1);
    first.save();
    const [entry, ...others] = readdirSync(path.join(dir, 'v8'));
    expect(others).toEqual([]);
    expect(entry).toMatch(/^bundle\.js-[0-9a-f]{32}\.bin$/);
    expect(await acceptedElsewhere(sourceNumber(1), path.join(dir, 'v8', entry!))).toBe(true);
    // V8 itself would take data made for another text of the same length; the entry's name is what keeps them apart.
    expect(path.basename(codeCacheFile('/pkg/bundle.js', sourceNumber(2), dir))).not.toBe(entry);
  });

  it('ignores a damaged entry and replaces it', async () => {
    const dir = path.join(scratch, 'cache-b');
    const entry = codeCacheFile('/pkg/bundle.js', sourceNumber(3), dir);
    mkdirSync(path.dirname(entry), { recursive: true });
    writeFileSync(entry, 'not V8 data');
    const damaged = compileWithCodeCache('/pkg/bundle.js', sourceNumber(3), dir);
    expect((damaged.script.runInThisContext() as () => number)()).toBe(199 * 2 + 3);
    damaged.save();
    expect(damaged.fromCache).toBe(false);
    expect(await acceptedElsewhere(sourceNumber(3), entry)).toBe(true);
  });

  it('runs without complaint where the cache cannot be written', () => {
    const blocked = path.join(scratch, 'a-file');
    writeFileSync(blocked, '');
    const script = compileWithCodeCache('/pkg/bundle.js', source, blocked);
    expect((script.script.runInThisContext() as () => number)()).toBe(199 * 2);
    expect(() => script.save()).not.toThrow();
  });

  it('lives in the user cache folder: XDG_CACHE_HOME first, never relative', () => {
    expect(toolCacheDir({ XDG_CACHE_HOME: '/var/cache/me' })).toBe(path.join('/var/cache/me', 'idempotency-builder'));
    expect(toolCacheDir({ XDG_CACHE_HOME: 'relative/dir', HOME: os.homedir() })).not.toContain('relative');
  });
});
