import { Node, SyntaxKind, type SourceFile, type VariableDeclaration } from 'ts-morph';
import { readInside } from '../emit/safePath.js';
import { formHasField, formsInTemplate, hiddenKeyInput, templateEngine } from '../inspect/parse/templateForms.js';
import { importStyleFor, type ProjectImports } from './importStyle.js';
import type { FileChange } from './planApply.js';
import { ensureNamedImport, fitStatement, parseSource } from './sourceFile.js';
import type { Edit, ManualStep, WiringTarget } from './types.js';

/** The views' local that mints a key per render: a function, so every form rendered gets a fresh one. */
export const FORM_KEY_LOCAL = 'idempotencyKey';

export interface ServerFormsOptions {
  root: string;
  targets: readonly WiringTarget[];
  /** Files this run already changed (their text after the other passes): the app file may be one of them. */
  changes: FileChange[];
  scaffoldDir: string;
  imports: ProjectImports;
}

/**
 * Actions a server-rendered form posts take their key from a hidden field (`key.field`): each form inspection found
 * gets that field, valued by a function in the views' locals, and the Express app puts the function there
 * (`app.locals.idempotencyKey = newIdempotencyKey`). A form moved since inspection, or an app apply cannot find, is a
 * step for the user saying what to add where. Applying twice changes nothing: a form that has the field keeps it.
 */
export async function wireServerForms(options: ServerFormsOptions): Promise<{ edits: Edit[]; manual: ManualStep[] }> {
  const edits: Edit[] = [];
  const manual: ManualStep[] = [];
  const targets = options.targets.filter((t) => t.keyField !== undefined && t.trigger === 'http');
  if (targets.length === 0) return { edits, manual };
  const text = async (file: string) => options.changes.find((c) => c.path === file)?.after ?? (await readInside(options.root, file).catch(() => undefined));
  const put = async (file: string, after: string) => {
    const existing = options.changes.find((c) => c.path === file);
    if (existing) existing.after = after;
    else options.changes.push({ path: file, before: (await readInside(options.root, file))!, after });
  };

  let anyForm = false;
  for (const target of targets) {
    const field = target.keyField!;
    const example = (engine: Parameters<typeof hiddenKeyInput>[0]) => hiddenKeyInput(engine, field, FORM_KEY_LOCAL);
    if ((target.forms ?? []).length === 0) {
      manual.push({ action: target.action, file: target.file, line: target.line, reason: `the action takes its key from a hidden ${field} field, but inspection found no form that posts it: add ${example('ejs')} (in your view engine's syntax) to the form, or have the caller send an Idempotency-Key header` });
      continue;
    }
    for (const location of target.forms ?? []) {
      const engine = templateEngine(location.file);
      const before = await text(location.file);
      const form = engine && before !== undefined ? formsInTemplate(before, engine).find((f) => f.line === location.line) : undefined;
      if (!engine || before === undefined || !form) {
        manual.push({ action: target.action, file: location.file, line: location.line, reason: `the form inspection found here has moved or changed: add ${engine ? example(engine) : example('ejs')} inside the form that posts ${target.method ?? 'POST'} ${target.path ?? ''}, or run init again` });
        continue;
      }
      anyForm = true;
      if (formHasField(before, form, field)) continue;
      const after = `${before.slice(0, form.bodyStart)}\n${form.childIndent}${example(engine)}${before.slice(form.bodyStart)}`;
      await put(location.file, after);
      edits.push({ action: target.action, file: location.file, summary: `adds the hidden ${field} field to the form at line ${location.line}, a key minted per render for ${target.method ?? 'POST'} ${target.path ?? ''}` });
    }
  }
  if (!anyForm) return { edits, manual };

  // The function the fields call: one statement where the app is created.
  const app = await expressApp(options.root, text);
  const first = targets[0]!;
  if (!app) {
    manual.push({ action: first.action, reason: `no Express app (\`express()\`) found to give its views the key function: add \`app.locals.${FORM_KEY_LOCAL} = newIdempotencyKey;\` (newIdempotencyKey from the scaffold's index) where your app is created, before the routes render` });
    return { edits, manual };
  }
  if (new RegExp(`\\.locals\\.${FORM_KEY_LOCAL}\\s*=`).test(app.text)) return { edits, manual };
  const style = importStyleFor(app.file, app.text, options.scaffoldDir, options.imports);
  const sf = parseSource(app.file, app.text, style);
  const added = addViewsKeyFunction(sf, app.binding, style.specifier('index'));
  if (added === 'no-app') {
    manual.push({ action: first.action, file: app.file, reason: `add \`${app.binding}.locals.${FORM_KEY_LOCAL} = newIdempotencyKey;\` (newIdempotencyKey from the scaffold's index) after the app is created` });
    return { edits, manual };
  }
  if (added === 'name-taken') {
    manual.push({ action: first.action, file: app.file, reason: `the file already binds "newIdempotencyKey": set \`${app.binding}.locals.${FORM_KEY_LOCAL}\` to the scaffold's newIdempotencyKey by hand` });
    return { edits, manual };
  }
  await put(app.file, sf.getFullText());
  edits.push({ action: first.action, file: app.file, summary: `gives the views ${FORM_KEY_LOCAL}(), a fresh key per rendered form (app.locals.${FORM_KEY_LOCAL} = newIdempotencyKey)` });
  return { edits, manual };
}

/**
 * `app.locals.idempotencyKey = newIdempotencyKey` in the file that creates the app, with newIdempotencyKey imported
 * (or required) from the scaffold's index. Placed after the app's declaration, its view engine setting and, in
 * CommonJS, the `require` that binds the function (a `const` read before its line would throw at startup).
 */
export function addViewsKeyFunction(sf: SourceFile, binding: string, specifier: string): 'added' | 'no-app' | 'name-taken' {
  if (!placeLocals(sf, binding)) return 'no-app';
  if (!ensureNamedImport(sf, specifier, 'newIdempotencyKey')) return 'name-taken';
  // The import went in above or below the app: place the statement on the new tree.
  placeLocals(sf, binding, fitStatement(sf, `${binding}.locals.${FORM_KEY_LOCAL} = newIdempotencyKey;`));
  return 'added';
}

/**
 * Where `statement` goes: after the app's `set('view engine', …)` when it has one in the same block, else right after
 * the app's declaration. Without `statement`, only says whether there is such a place.
 */
function placeLocals(sf: SourceFile, binding: string, statement?: string): boolean {
  const declaration = appDeclaration(sf, binding);
  const declared = declaration?.getFirstAncestorByKind(SyntaxKind.VariableStatement);
  const block = declared?.getParent();
  if (!declared || !block || !(Node.isSourceFile(block) || Node.isBlock(block))) return false;
  if (statement === undefined) return true;
  // Indices as insertStatements counts them: comment-only lines are statements there.
  const statements = block.getStatementsWithComments();
  const viewEngine = statements.findIndex((s) => Node.isExpressionStatement(s) && new RegExp(`^${binding}\\.set\\(\\s*['"]view engine['"]`).test(s.getText()));
  const required = statements.findIndex((s) => Node.isVariableStatement(s) && s.getDeclarations().some((d) => /\bnewIdempotencyKey\b/.test(d.getNameNode().getText())));
  const at = Math.max(viewEngine, statements.indexOf(declared), required) + 1;
  block.insertStatements(at, statement);
  return true;
}

function appDeclaration(sf: SourceFile, binding: string): VariableDeclaration | undefined {
  return sf.getDescendantsOfKind(SyntaxKind.VariableDeclaration).find((d) => d.getName() === binding && /^\w+\(\s*\)$/.test(d.getInitializer()?.getText() ?? ''));
}

/** The file that creates the Express app (`const app = express()`), preferring one that sets a view engine. */
async function expressApp(root: string, text: (file: string) => Promise<string | undefined>): Promise<{ file: string; text: string; binding: string } | undefined> {
  const { walkProject } = await import('../inspect/files/walkProject.js');
  const { files } = await walkProject(root);
  const found: Array<{ file: string; text: string; binding: string; views: boolean }> = [];
  for (const file of files.filter((f) => f.kind === 'source').sort((a, b) => (a.rel < b.rel ? -1 : 1))) {
    const source = await text(file.rel);
    if (source === undefined || !/['"]express['"]/.test(source)) continue;
    const factory = /(?:const|let|var)\s+(\w+)\s*=\s*require\(\s*['"]express['"]\s*\)|import\s+(?:\*\s+as\s+)?(\w+)\s+from\s+['"]express['"]/.exec(source);
    const name = factory?.[1] ?? factory?.[2];
    if (!name) continue;
    const app = new RegExp(`(?:const|let|var)\\s+(\\w+)\\s*=\\s*${name}\\(\\s*\\)`).exec(source);
    if (app) found.push({ file: file.rel, text: source, binding: app[1]!, views: /\.set\(\s*['"]view engine['"]/.test(source) });
  }
  const chosen = found.find((f) => f.views) ?? (found.length === 1 ? found[0] : undefined);
  return chosen && { file: chosen.file, text: chosen.text, binding: chosen.binding };
}
