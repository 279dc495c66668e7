import type { ScaffoldFile } from '../types.js';
import { precompiledJavaScript } from './precompiled.js';
import { transpileSuiteToJavaScript, transpileToJavaScript, type ModuleType } from './transpile.js';

/** `core.ts` → `core.js`; other files (SQL, YAML, Markdown) keep their names. */
export const javaScriptPath = (path: string) => path.replace(/\.ts$/, '.js');

/**
 * The TypeScript scaffolding as JavaScript: one source of truth, the types stripped. Transpiled files go through
 * prettier in generate (the emitter's layout is not the house style); templates the build precompiled are marked
 * formatted.
 */
export function toJavaScriptFiles(files: readonly ScaffoldFile[], moduleType: ModuleType, options: { esmTests?: boolean } = {}): ScaffoldFile[] {
  const esmTests = options.esmTests ?? true;
  return files.map((file) => {
    if (file.role === 'readme') {
      const { javascript, ...readme } = file;
      return { ...readme, contents: javascript ?? readmeToJavaScript(file.contents, moduleType) };
    }
    if (!file.path.endsWith('.ts')) return file;
    // Printed as JavaScript by its emitter, in the house style: neither compiler nor prettier.
    if (file.javascript !== undefined) return { path: javaScriptPath(file.path), contents: file.javascript, class: file.class, role: file.role, formatted: true };
    // Printed as JavaScript too, but a value overflows its line: prettier lays it out, without the compiler.
    if (file.javascriptToFormat !== undefined) return { path: javaScriptPath(file.path), contents: file.javascriptToFormat, class: file.class, role: file.role };
    // Only a vitest suite must stay an ES module; jest, mocha and node:test load CommonJS tests as the app does.
    const tests = file.role === 'tests' && esmTests;
    // A verbatim template the build already turned into house-style JavaScript needs neither compiler nor prettier.
    // (A suite adapted for another runner is left to the run-time path, as it always was.)
    const prebuilt = file.role !== 'tests' ? precompiledJavaScript(file.contents, moduleType) : tests ? precompiledJavaScript(file.contents, moduleType, 'suite') : undefined;
    if (prebuilt !== undefined) return { path: javaScriptPath(file.path), contents: prebuilt, class: file.class, role: file.role, formatted: true };
    // vitest refuses to be require()d, so the suite stays an ES module even in a CommonJS project.
    let contents = tests ? transpileSuiteToJavaScript(file.contents, moduleType, file.path) : transpileToJavaScript(file.contents, moduleType, file.path);
    if (contents.trim() === '' || contents.trim() === "'use strict';") contents = `// Types only in the TypeScript version: nothing to run here.\n`;
    return { path: javaScriptPath(file.path), contents, class: file.class, role: file.role };
  });
}

/**
 * The README's TypeScript examples, stripped the same way as the files, and every file it names by its .js name.
 * Code blocks are not reformatted by prettier (Markdown embeds stay as written), so the emitter's four-space
 * indentation is halved here; README examples hold no multi-line strings that this could change.
 */
function readmeToJavaScript(text: string, moduleType: ModuleType): string {
  return text
    .replace(/```ts\n([\s\S]*?)```/g, (_block, code: string) => {
      const js = transpileToJavaScript(code, moduleType, 'README.ts', { snippet: true }).replace(/^(?: {4})+/gm, (indent) => indent.slice(indent.length / 2));
      return `\`\`\`js\n${js}\`\`\``;
    })
    .replace(/\b([\w.-]+)\.ts\b/g, '$1.js');
}
