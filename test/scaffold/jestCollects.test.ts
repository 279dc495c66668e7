import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold, readProjectProfile } from '../../src/scaffold/index.js';
import { scaffoldProject } from '../../src/scaffold/scaffoldProject.js';
import { globToRegExp, jestCollects, readJestCollection } from '../../src/scaffold/profile/jestCollects.js';
import { modelFor } from './generateInto.js';

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

async function project(files: Record<string, unknown>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'idem-jest-collects-'));
  roots.push(root);
  for (const [name, value] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), typeof value === 'string' ? value : JSON.stringify(value));
  }
  return root;
}

describe('globToRegExp (micromatch syntax, as Jest matches absolute paths)', () => {
  const [underTests, named] = ['**/__tests__/**/*.[jt]s?(x)', '**/?(*.)+(spec|test).[jt]s?(x)'].map(globToRegExp) as [RegExp, RegExp];

  it("reads Jest's default testMatch", () => {
    expect(named.test('/app/src/idempotency/idempotency.test.ts')).toBe(true);
    expect(named.test('/app/src/idempotency/idempotency.spec.js')).toBe(true);
    expect(named.test('/app/src/idempotency/webhooks/webhooks.test.jsx')).toBe(true);
    expect(named.test('/app/src/idempotency/core.ts')).toBe(false);
    expect(underTests.test('/app/src/__tests__/orders.js')).toBe(true);
    expect(underTests.test('/app/src/orders.js')).toBe(false);
  });

  it('braces, classes, negated extglobs; a relative glob never matches an absolute path (as in Jest)', () => {
    expect(globToRegExp('**/*.{spec,e2e}.ts').test('/app/test/a.e2e.ts')).toBe(true);
    expect(globToRegExp('**/*.{spec,e2e}.ts').test('/app/test/a.test.ts')).toBe(false);
    expect(globToRegExp('**/!(fixtures)/*.test.js').test('/app/fixtures/a.test.js')).toBe(false);
    expect(globToRegExp('**/!(fixtures)/*.test.js').test('/app/src/a.test.js')).toBe(true);
    expect(globToRegExp('src/**/*.test.js').test('/app/src/a.test.js')).toBe(false);
  });
});

describe('readJestCollection', () => {
  it('reads literal testMatch, roots and a regular-expression testRegex from a jest.config.* without running it', async () => {
    const root = await project({
      'package.json': { jest: { testMatch: ['**/ignored.js'] } },
      'jest.config.js': `// testMatch: ['**/commented-out.js'],
module.exports = {
  /* roots: ['nope'] */
  roots: ['<rootDir>/src', "<rootDir>/test"],
  testMatch: [
    '**/?(*.)+(spec).js', // collect specs only
  ],
  testEnvironment: 'node',
};
`,
    });
    expect(readJestCollection(root, {})).toEqual({ roots: ['<rootDir>/src', '<rootDir>/test'], testMatch: ['**/?(*.)+(spec).js'] });
    const ts = await project({ 'jest.config.ts': "export default { testRegex: /.*\\.spec\\.ts$/, preset: 'ts-jest' };\n" });
    expect(readJestCollection(ts, {})).toEqual({ testRegex: ['.*\\.spec\\.ts$'] });
  });

  it('a value that is not a literal is unknown: Jest default', async () => {
    const root = await project({ 'jest.config.js': "const patterns = require('./patterns');\nmodule.exports = { testMatch: patterns };\n" });
    const collection = readJestCollection(root, {});
    expect(collection).toEqual({});
    expect(jestCollects(collection, root, path.join(root, 'src/idempotency/idempotency.test.js'))).toBe(true);
  });

  it('honours rootDir and roots', async () => {
    const root = await project({});
    expect(jestCollects({ roots: ['<rootDir>/tests'] }, root, path.join(root, 'src/idempotency/idempotency.test.js'))).toBe(false);
    expect(jestCollects({ rootDir: ['src'], testRegex: ['.*\\.spec\\.ts$'] }, root, path.join(root, 'src/idempotency/idempotency.spec.ts'))).toBe(true);
    expect(jestCollects({ rootDir: ['src'] }, root, path.join(root, 'lib/idempotency/idempotency.test.ts'))).toBe(false);
  });
});

describe('generated suites follow what the Jest config collects', () => {
  const javascriptProfile = (root: string) => readProjectProfile({ root, dir: 'src/idempotency', language: 'javascript', testFramework: 'jest' });

  it('a JavaScript project whose jest.config.js collects *.spec.js: suites, README and references renamed', async () => {
    const root = await project({ 'package.json': { devDependencies: { jest: '^29.7.0' } }, 'jest.config.js': "module.exports = { testMatch: ['**/*.spec.js'] };\n" });
    const profile = await javascriptProfile(root);
    expect(profile).toMatchObject({ testRunner: 'jest', testFileSuffix: 'spec' });
    const model = await modelFor('express-js-orders');
    const files = generateScaffold(model, { dir: 'src/idempotency', profile });
    const suites = files.filter((file) => file.role === 'tests' && /\.(test|spec)\.js$/.test(file.path)).map((file) => file.path);
    expect(suites).toContain('src/idempotency/idempotency.spec.js');
    expect(suites.filter((name) => name.endsWith('.test.js'))).toEqual([]);
    for (const file of files) expect(file.contents, file.path).not.toMatch(/\b[\w-]+\.test\.js\b/);
  });

  it('the default config (hagopj13/node-express-boilerplate: testEnvironment only) keeps *.test.js', async () => {
    const root = await project({ 'package.json': { devDependencies: { jest: '^26.6.0' } }, 'jest.config.js': "module.exports = { testEnvironment: 'node', restoreMocks: true };\n" });
    const profile = await javascriptProfile(root);
    expect(profile.testFileSuffix).toBeUndefined();
    expect(profile.jestIgnoresSuites).toBeUndefined();
    expect(profile).toMatchObject({ bareBuiltins: true, jestSandbox: true });
  });

  it('roots that leave the scaffold folder out: the README says what to add to the config', async () => {
    const root = await project({ 'package.json': { devDependencies: { jest: '^29.7.0' }, jest: { roots: ['<rootDir>/tests'] } } });
    const profile = await javascriptProfile(root);
    expect(profile).toMatchObject({ jestIgnoresSuites: true });
    const model = await modelFor('express-js-orders');
    const readme = generateScaffold(model, { dir: 'src/idempotency', profile }).find((file) => file.path === 'src/idempotency/README.md')!;
    expect(readme.contents).toContain("'**/src/idempotency/**/*.test.js'");
  });

  it('and the terminal says so too, for the package the scaffold lands in', async () => {
    // The shape of stripe/stripe-commercetools-connect-app@1c61c00's processor: jest.config.ts with roots ['./test'].
    const root = await project({
      'processor/package.json': { name: 'processor', devDependencies: { jest: '^30.0.0', typescript: '^5.0.0' } },
      'processor/jest.config.ts': "module.exports = { preset: 'ts-jest', roots: ['./test'] };\n",
      'processor/src/routes.ts': '',
    });
    const model = await modelFor('express-stripe-payments', (raw) => Object.assign(raw.stack as Record<string, unknown>, { testFramework: 'jest' }));
    model.actions = model.actions.map((action) => ({ ...action, source: 'processor/src/routes.ts:1' }));
    const project_ = await scaffoldProject({ root, model, dir: 'processor/src/idempotency', packageManager: 'npm' });
    expect(project_.notes).toContainEqual(expect.stringContaining('The Jest config of processor (testMatch, testRegex or roots) does not collect the generated suites in processor/src/idempotency'));
    // The README's command runs where processor's Jest config and dependencies are.
    const readme = project_.files.find((file) => file.path === 'processor/src/idempotency/README.md')!.contents;
    expect(readme).toContain('npx jest src/idempotency`');
    expect(readme).not.toContain('npx jest processor/src/idempotency');
    expect(readme).toContain('Run the commands here from `processor/`');
    expect(readme).toContain("'**/src/idempotency/**/*.test.ts'");
  });
});

describe('a Jest that cannot read TypeScript', () => {
  const typescriptProfile = (root: string) => readProjectProfile({ root, dir: 'src/idempotency', language: 'typescript', testFramework: 'jest' });

  it('TypeScript output under a bare Jest: ts-jest of its major is added to the install line and the terminal says where the preset goes', async () => {
    // The shape of Vegetam/microservices-ddd-kafka@afdd111: TypeScript sources, Jest 29 running one JavaScript smoke test.
    const root = await project({ 'package.json': { dependencies: { express: '^4.19.0' }, devDependencies: { jest: '^29.7.0', typescript: '^5.2.2' } }, 'tsconfig.json': { compilerOptions: { module: 'commonjs', target: 'ES2020', esModuleInterop: true, strict: true } }, 'src/app.ts': '' });
    expect((await typescriptProfile(root)).jestTransform).toBe('ts-jest@29');
    const model = await modelFor('express-stripe-payments', (raw) => Object.assign(raw.stack as Record<string, unknown>, { testFramework: 'jest' }));
    const { notes } = await scaffoldProject({ root, model, dir: 'src/idempotency', packageManager: 'npm' });
    expect(notes.find((note) => note.startsWith('The scaffolding in src/idempotency needs packages'))).toMatch(/npm i -D [^&]*\bts-jest@29\b/);
    expect(notes).toContainEqual(expect.stringContaining("has no TypeScript transform (no ts-jest, @swc/jest or Babel TypeScript preset), so it cannot load the generated .ts suites: with ts-jest installed (in the line above), add `preset: 'ts-jest'`"));
  });

  it('a transform declared anywhere it can be (a dependency, the root manifest, the Jest or Babel config) is trusted', async () => {
    const cases: Array<Record<string, unknown>> = [
      { 'package.json': { devDependencies: { jest: '^29.7.0', '@swc/jest': '^0.2.0' } } },
      { 'package.json': { devDependencies: { jest: '^29.7.0' } }, 'jest.config.js': "module.exports = { transform: require('./transform') };\n" },
      { 'package.json': { devDependencies: { jest: '^29.7.0' }, jest: { preset: 'ts-jest' } } },
      { 'package.json': { devDependencies: { jest: '^29.7.0' } }, 'babel.config.js': "module.exports = { presets: ['@babel/preset-env'] };\n" },
      { 'package.json': { workspaces: ['api'], devDependencies: { 'ts-jest': '^29.0.0' } }, 'api/package.json': { name: 'api', devDependencies: { jest: '^29.7.0' } } },
    ];
    for (const files of cases) {
      const root = await project(files);
      const dir = 'api/package.json' in files ? 'api/src/idempotency' : 'src/idempotency';
      expect((await readProjectProfile({ root, dir, language: 'typescript', testFramework: 'jest' })).jestTransform, JSON.stringify(files)).toBeUndefined();
    }
    // JavaScript output needs no transform.
    const plain = await project({ 'package.json': { devDependencies: { jest: '^26.6.0' } } });
    expect((await readProjectProfile({ root: plain, dir: 'src/idempotency', language: 'javascript', testFramework: 'jest' })).jestTransform).toBeUndefined();
    expect((await typescriptProfile(plain)).jestTransform).toBe('ts-jest@26');
  });
});
