import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold, readProjectProfile } from '../../src/scaffold/index.js';
import { modelFor, ROOT } from './generateInto.js';

const run = promisify(execFile);
const TSC39 = path.join(ROOT, 'node_modules/typescript39/bin/tsc');

/**
 * Representative designs: the HTTP adapters real old projects use (Express, Koa, NestJS on CommonJS with
 * decorators) and every SQL/Redis store template, with the saga and trigger templates the fixtures bring.
 */
const VARIANTS: Array<{ label: string; fixture: string; stack: Record<string, string> }> = [
  { label: 'express-postgres', fixture: 'express-stripe-payments', stack: { framework: 'express', database: 'postgres' } },
  { label: 'koa-postgres', fixture: 'express-stripe-payments', stack: { framework: 'koa', database: 'postgres' } },
  { label: 'nestjs-postgres', fixture: 'nestjs-adyen-saga', stack: { framework: 'nestjs', database: 'postgres' } },
  { label: 'koa-redis', fixture: 'minimal-one-action', stack: { framework: 'koa', database: 'redis' } },
  { label: 'express-mysql', fixture: 'express-stripe-payments', stack: { framework: 'express', database: 'mysql' } },
];

/**
 * TypeScript 3.9 cannot parse today's declaration files (@types/node 20, pg, express 5 use syntax from 4.x), and
 * skipLibCheck does not skip parsing. So the project lives outside this repository (no node_modules to resolve
 * into), with `types: []`; every package the scaffold imports is a stub module (moduleStubs below: each name it
 * uses, all `any`), Node's globals loose declarations (a shorthand `declare module 'pg';` would not do: `pg.Pool`
 * could not be a type). What TypeScript 3.9 then checks is our generated files themselves: their syntax, the lib
 * they rely on (ES2018 at most: lib es2017 plus what @types/node 12–16 add, as such projects have it) and their own types, for targets ES3 (no accessors), ES5
 * (downlevel iteration) and ES2017. It cannot check that we call the libraries right: the current compiler's
 * suites (profiles*, storesMatrix) do that against the real typings.
 */
const NODE_GLOBALS = `
interface Loose {
  // Generic, so \`new AsyncLocalStorage<T>()\` and \`fn<T>()\` type-check against the stub as against the real typings.
  <A = any, B = any>(...args: any[]): any;
  new <A = any, B = any>(...args: any[]): any;
  [key: string]: any;
}
declare var process: any;
interface Buffer extends Uint8Array {
  toString(encoding?: string, start?: number, end?: number): string;
  [key: string]: any;
}
declare var Buffer: {
  isBuffer(value: unknown): value is Buffer;
  [key: string]: any;
};
type BufferEncoding = string;
declare var Blob: Loose;
type Blob<T = any> = any;
declare var ReadableStream: Loose;
type ReadableStream<T = any> = any;
declare var Response: Loose;
type Response<T = any> = any;
declare var Request: Loose;
type Request<T = any> = any;
declare var Headers: Loose;
type Headers<T = any> = any;
declare var AbortController: Loose;
type AbortController<T = any> = any;
declare var AbortSignal: Loose;
type AbortSignal<T = any> = any;
declare var URL: Loose;
type URL<T = any> = any;
declare var URLSearchParams: Loose;
type URLSearchParams<T = any> = any;
declare var TextEncoder: Loose;
type TextEncoder<T = any> = any;
declare var TextDecoder: Loose;
type TextDecoder<T = any> = any;
declare var console: any;
declare var setTimeout: any;
declare var clearTimeout: any;
declare var setInterval: any;
declare var clearInterval: any;
declare var setImmediate: any;
declare var queueMicrotask: any;
declare var fetch: any;
declare var performance: any;
declare var require: any;
declare var module: any;
declare var __dirname: string;
declare namespace NodeJS {
  type Timeout = any;
  type Timer = any;
  type ErrnoException = any;
  type ProcessEnv = Record<string, string | undefined>;
}
interface ErrorOptions {
  cause?: unknown;
}
interface Error {
  cause?: unknown;
}
interface ErrorConstructor {
  new (message?: string, options?: ErrorOptions): Error;
  captureStackTrace(target: object, constructor?: Function): void;
}
`;

interface ModuleUse {
  /** Names read off the module (named imports, `pg.Pool`-style members of its binding): true when the scaffold calls one. */
  members: Map<string, boolean>;
  /** The default/namespace/`import =` binding is called (`express()`) rather than constructed (`new Koa()`). */
  called: boolean;
}

/**
 * A stub for every package (and Node builtin) the generated files import, in the shape of a real typing's
 * `export =`: a class (a function when the scaffold calls it) merged with a namespace holding each member it reads,
 * again a class (instances of any shape; `instanceof` narrows) or a function when called. Read off the generated
 * files with the project's own TypeScript.
 */
function moduleStubs(sources: readonly string[]): string {
  const uses = new Map<string, ModuleUse>();
  const useOf = (name: string) => uses.get(name) ?? uses.set(name, { members: new Map(), called: false }).get(name)!;
  const mark = (use: ModuleUse, member: string, called: boolean) => use.members.set(member, called || use.members.get(member) === true);
  for (const source of sources) {
    const file = ts.createSourceFile('generated.ts', source, ts.ScriptTarget.Latest, true);
    const hosts = new Map<string, ModuleUse>();
    const named = new Map<string, { use: ModuleUse; member: string }>();
    for (const statement of file.statements) {
      let specifier: string | undefined;
      if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) specifier = statement.moduleSpecifier.text;
      if (ts.isImportEqualsDeclaration(statement) && ts.isExternalModuleReference(statement.moduleReference) && ts.isStringLiteral(statement.moduleReference.expression)) {
        specifier = statement.moduleReference.expression.text;
      }
      if (specifier === undefined || /^\.\.?\//.test(specifier)) continue;
      const use = useOf(specifier);
      if (ts.isImportEqualsDeclaration(statement)) hosts.set(statement.name.text, use);
      const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined;
      if (clause?.name) hosts.set(clause.name.text, use);
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) hosts.set(bindings.name.text, use);
      if (bindings && ts.isNamedImports(bindings)) {
        for (const element of bindings.elements) {
          const member = (element.propertyName ?? element.name).text;
          mark(use, member, false);
          named.set(element.name.text, { use, member });
        }
      }
    }
    const visit = (node: ts.Node): void => {
      if (ts.isQualifiedName(node) && ts.isIdentifier(node.left)) {
        const host = hosts.get(node.left.text);
        if (host) mark(host, node.right.text, false);
      }
      if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
        const host = hosts.get(node.expression.text);
        if (host) mark(host, node.name.text, ts.isCallExpression(node.parent) && node.parent.expression === node);
      }
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
        const host = hosts.get(node.expression.text);
        if (host) host.called = true;
        const imported = named.get(node.expression.text);
        if (imported) mark(imported.use, imported.member, true);
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  const host = (called: boolean) =>
    called ? '  function Stub(...args: any[]): any;\n' : '  class Stub {\n    constructor(...args: any[]);\n    [key: string]: any;\n  }\n';
  return [...uses.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, use]) => {
      // `import { default as Redis } from 'ioredis'`: typings with an ES default export (ioredis 5), not `export =`.
      if (use.members.has('default')) {
        const named = [...use.members.keys()].filter((member) => member !== 'default').sort();
        const exports = named.map((member) => `  export const ${member}: Loose;\n  export type ${member}<A = any, B = any, C = any, D = any> = any;\n`);
        return `declare module ${JSON.stringify(name)} {\n${host(use.members.get('default') === true)}  export default Stub;\n${exports.join('')}}\n`;
      }
      const members = [...use.members.keys()].sort().map((member) => `    const ${member}: Loose;\n    type ${member}<A = any, B = any, C = any, D = any> = any;\n`);
      return `declare module ${JSON.stringify(name)} {\n${host(use.called)}  namespace Stub {\n${members.join('')}  }\n  export = Stub;\n}\n`;
    })
    .join('');
}

// ES3/ES5 without esModuleInterop (`import pg = require('pg')`), as 2019-20 starters compile (ES3: no accessors);
// ES2017 with it and node-typescript-koa-rest's checks: noImplicitAny without strictNullChecks (its own tsc, run on
// the generated scaffold, caught an unannotated `() => undefined` field there).
describe.each([
  { target: 'es3', esModuleInterop: false, checks: { strict: true } },
  { target: 'es5', esModuleInterop: false, checks: { strict: true } },
  { target: 'es2017', esModuleInterop: true, checks: { strict: false, noImplicitAny: true } },
])('the scaffold under TypeScript 3.9, target $target', ({ target, esModuleInterop, checks }) => {
  let dir = '';
  afterAll(async () => {
    if (dir && !process.env.KEEP_PROFILE_PROJECTS) await rm(dir, { recursive: true, force: true });
  });

  it('compiles every variant with one tsc 3.9 run', { timeout: 240_000 }, async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), `oldtc-ts39-${target}-`));
    const compilerOptions = {
      target,
      module: 'commonjs',
      lib: ['es2018'],
      ...checks,
      esModuleInterop,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      skipLibCheck: true,
      noEmit: true,
      types: [],
      typeRoots: [],
    };
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['**/*.ts'] }, null, 2));
    // How a 2020-21 project pins its toolchain: the profile reads TypeScript 3.9 and Jest 26 from here.
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ private: true, devDependencies: { typescript: '3.9.10', jest: '^26.6.3', 'ts-jest': '^26.5.6' } }));
    const sources: string[] = [];
    for (const variant of VARIANTS) {
      const scaffoldDir = `${variant.label}/src/idempotency`;
      const profile = await readProjectProfile({ root: dir, dir: scaffoldDir, language: 'typescript', testFramework: 'jest' });
      expect(profile).toMatchObject({ moduleSystem: 'commonjs', relativeImports: 'extensionless', typescriptVersion: 309 });
      const model = await modelFor(variant.fixture, (raw) => {
        Object.assign(raw.stack as Record<string, unknown>, { language: 'typescript', testFramework: 'jest', ...variant.stack });
      });
      for (const file of generateScaffold(model, { dir: scaffoldDir, profile })) {
        await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
        await writeFile(path.join(dir, file.path), file.contents);
        if (file.path.endsWith('.ts')) sources.push(file.contents);
      }
    }
    await writeFile(path.join(dir, 'ambient.d.ts'), NODE_GLOBALS + moduleStubs(sources));

    const compiled = await run(process.execPath, [TSC39, '-p', dir], { cwd: dir, maxBuffer: 16 * 1024 * 1024 }).then(
      () => '',
      (error: { stdout?: string }) => String(error.stdout),
    );
    // Only the stubs' `any` causes these: a callback handed to a library gets no contextual parameter types (TS7006)
    // nor, without strictNullChecks, a return type (`pool.on('error', () => undefined)` widens: TS7011, TS7018),
    // and a typed call on a library value (`pool.query<Row>()`) is an untyped call (TS2347).
    const errors = compiled.split('\n').filter((line) => /error TS\d+/.test(line) && !/error TS(7006|7011|7018|2347):/.test(line));
    expect(errors).toEqual([]);
    // Every variant was checked (tsc printed nothing else than those stub artefacts).
    expect(compiled.split('\n').filter((line) => line.trim() !== '' && !/^\S.*\(\d+,\d+\): error TS\d+:/.test(line) && !/^\s/.test(line))).toEqual([]);
  });
});
