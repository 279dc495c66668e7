import type * as BeautifulMermaid from 'beautiful-mermaid';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileWithCodeCache, type CachedScript } from './v8CodeCache.js';

export interface LayoutEngine {
  renderMermaidSVG: typeof BeautifulMermaid.renderMermaidSVG;
  /** Keeps V8's compiled code for the next run (see v8CodeCache); call once the layouts are done. */
  saveCodeCache(): void;
  /** How it was loaded: compiled as scripts through the code cache, or the plain import (fallback). */
  loadedAs: 'scripts' | 'import';
}

let loaded: Promise<LayoutEngine> | undefined;

/**
 * beautiful-mermaid and elkjs, loaded once per thread. Imported the ordinary way, the ESM package's default import of
 * elkjs's 1.6 MB CommonJS bundle makes Node scan the whole bundle for export names (cjs-module-lexer) before compiling
 * it, and nothing can keep V8's code between runs on Node 20. So both files are compiled here as scripts from V8's
 * code cache: the same code, run once each, with the same inputs. Anything unexpected in the installed files (another
 * module shape than the pinned version's) falls back to the plain import.
 */
export function loadBeautifulMermaid(): Promise<LayoutEngine> {
  loaded ??= (async () => {
    let engine: LayoutEngine | undefined;
    try {
      engine = loadAsScripts();
    } catch {
      engine = undefined;
    }
    if (engine) return engine;
    const { renderMermaidSVG } = await import('beautiful-mermaid');
    return { renderMermaidSVG, saveCodeCache: () => undefined, loadedAs: 'import' as const };
  })();
  return loaded;
}

/** The file `import 'beautiful-mermaid'` would load from this module, found the way Node's resolver does. */
function beautifulMermaidEntry(): string | undefined {
  const here = fileURLToPath(import.meta.url);
  for (const dir of createRequire(here).resolve.paths('beautiful-mermaid') ?? []) {
    const manifest = path.join(dir, 'beautiful-mermaid', 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown; type?: unknown; exports?: { '.'?: { import?: unknown } } };
    const target = pkg.exports?.['.']?.import;
    if (pkg.name !== 'beautiful-mermaid' || pkg.type !== 'module' || typeof target !== 'string') return undefined;
    return path.join(dir, 'beautiful-mermaid', target);
  }
  return undefined;
}

const IMPORT = /^import (?:(\w+)|\{([^}]*)\}) from "([^"]+)";[ \t]*$/gm;
const EXPORT = /^export \{([^}]*)\};[ \t]*$/m;
const BINDING = /^\s*(\w+)(?:\s+as\s+(\w+))?\s*$/;

/**
 * The ESM bundle as a function of its imports returning its exports: `import x from "m"` becomes a binding taken
 * before the body runs (imports are hoisted), `export { a as b }` the returned object. undefined for any other shape
 * (dynamic import, import.meta, an export that is not the last statement), which the plain import then handles.
 */
export function esmBundleAsScript(source: string): { wrapped: string; specifiers: string[] } | undefined {
  const specifiers: string[] = [];
  const declarations: string[] = [];
  const bindings = (list: string) => list.split(',').filter((item) => item.trim() !== '').map((item) => BINDING.exec(item));
  let malformed = false;
  let body = source.replace(IMPORT, (_line, whole: string | undefined, named: string | undefined, specifier: string) => {
    const index = specifiers.push(specifier) - 1;
    if (whole !== undefined) {
      declarations.push(`const ${whole} = __imports[${index}].default;`);
    } else {
      for (const binding of bindings(named!)) {
        if (!binding) malformed = true;
        else declarations.push(`const ${binding[2] ?? binding[1]} = __imports[${index}].named[${JSON.stringify(binding[1])}];`);
      }
    }
    return '';
  });
  const exported = EXPORT.exec(body);
  if (malformed || !exported) return undefined;
  const rest = body.slice(exported.index + exported[0].length);
  if (!/^(?:\s|\/\/[^\n]*)*$/.test(rest)) return undefined;
  const members = bindings(exported[1]!);
  if (members.some((binding) => !binding)) return undefined;
  const returned = members.map((binding) => `${JSON.stringify(binding![2] ?? binding![1])}: ${binding![1]}`).join(', ');
  body = `${body.slice(0, exported.index)}return { ${returned} };${rest}`;
  if (/\bimport\s*[.(]|^\s*(?:import|export)\b/m.test(body)) return undefined;
  return { wrapped: `(function (__imports) {"use strict";${declarations.join(' ')}\n${body}\n})`, specifiers };
}

function loadAsScripts(): LayoutEngine | undefined {
  const entry = beautifulMermaidEntry();
  if (entry === undefined) return undefined;
  const shape = esmBundleAsScript(readFileSync(entry, 'utf8'));
  if (shape === undefined) return undefined;
  const requireFromEntry = createRequire(entry);
  const scripts: CachedScript[] = [];
  const imports = shape.specifiers.map((specifier) => {
    const file = requireFromEntry.resolve(specifier);
    // A CommonJS module: the ESM default import is its `module.exports`, a named import one of its properties.
    const exports = file.endsWith('.js') && isCommonJs(file) ? runCommonJs(file, scripts) : (requireFromEntry(specifier) as unknown);
    return { default: exports, named: exports as Record<string, unknown> };
  });
  const bundle = compileWithCodeCache(entry, shape.wrapped);
  scripts.push(bundle);
  const run = bundle.script.runInThisContext() as (imports: unknown) => { renderMermaidSVG?: unknown };
  const { renderMermaidSVG } = run(imports);
  if (typeof renderMermaidSVG !== 'function') return undefined;
  return {
    renderMermaidSVG: renderMermaidSVG as LayoutEngine['renderMermaidSVG'],
    saveCodeCache: () => scripts.forEach((script) => script.save()),
    loadedAs: 'scripts',
  };
}

/** Only big bundles are worth a cache entry; the rest (entities) is required normally. */
const CACHED_SIZE = 256 * 1024;

function isCommonJs(file: string): boolean {
  let dir = path.dirname(file);
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) return (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: unknown }).type !== 'module';
    const parent = path.dirname(dir);
    if (parent === dir) return true;
    dir = parent;
  }
}

/** Runs a CommonJS file the way `require` would, compiled through the code cache when it is large. */
function runCommonJs(file: string, scripts: CachedScript[]): unknown {
  const source = readFileSync(file, 'utf8');
  const requireHere = createRequire(file);
  if (source.length < CACHED_SIZE) return requireHere(file);
  const script = compileWithCodeCache(file, `(function (exports, require, module, __filename, __dirname) {${source}\n})`);
  scripts.push(script);
  const module = { exports: {} as unknown };
  (script.script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, requireHere, module, file, path.dirname(file));
  return module.exports;
}
