import { readInside } from '../emit/safePath.js';
import { formHasField, formsInTemplate, hiddenKeyInput, templateEngine } from '../inspect/parse/templateForms.js';
import { importStyleFor, type ProjectImports } from './importStyle.js';
import type { FileChange } from './planApply.js';
import { parseSource } from './sourceFile.js';
import type { Edit, ManualStep, WiringTarget } from './types.js';
import { FORM_KEY_LOCAL, KEY_FUNCTION, VIEWS_KEY, type ViewsSource } from './viewsKey/index.js';
import { projectFiles } from './projectScan.js';

export interface ServerFormsOptions {
  root: string;
  /** One of VIEWS_KEY's frameworks: it says where the views get the key function. */
  framework: string;
  targets: readonly WiringTarget[];
  /** Files this run already changed (their text after the other passes): the app file may be one of them. */
  changes: FileChange[];
  scaffoldDir: string;
  imports: ProjectImports;
}

/**
 * Actions a server-rendered form posts take their key from a hidden field (`key.field`): each form inspection found
 * gets that field, valued by a function in the views' locals, and the framework's pass (viewsKey/) puts the function
 * where the app sets up its views (Express `app.locals`, Koa `ctx.state`, @fastify/view's `defaultContext`). A form
 * moved since inspection, or an app apply cannot find, is a step for the user saying what to add where. Applying
 * twice changes nothing: a form that has the field keeps it, views that have the function keep it.
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

  // The function the fields call, where the framework sets up its views.
  const wiring = VIEWS_KEY[options.framework]!;
  const { files } = await projectFiles(options.root);
  const sources: ViewsSource[] = [];
  for (const file of files.filter((f) => f.kind === 'source').sort((a, b) => (a.rel < b.rel ? -1 : 1))) {
    const source = await text(file.rel);
    if (source === undefined || !wiring.mentions.test(source)) continue;
    const parse = () => {
      const style = importStyleFor(file.rel, source, options.scaffoldDir, options.imports);
      return { sf: parseSource(file.rel, source, style), specifier: style.specifier('index') };
    };
    sources.push({ file: file.rel, text: source, parse });
  }
  const first = targets[0]!;
  const wired = wiring.wire(sources);
  for (const change of wired.changed) {
    await put(change.file, change.text);
    edits.push({ action: first.action, file: change.file, summary: change.summary });
  }
  manual.push(...wired.manual.map((step) => ({ action: first.action, ...step })));
  return { edits, manual };
}

/** Whether apply gives this framework's views the key function (else the forms are a step for the user). */
export function wiresServerForms(framework: string | undefined): boolean {
  return framework !== undefined && Object.hasOwn(VIEWS_KEY, framework);
}

/** The step for a form-posted action in a framework whose views apply does not edit, in that framework's terms. */
export function formsByHand(framework: string | undefined, target: WiringTarget): ManualStep {
  const field = target.keyField!;
  const route = `${target.method ?? 'POST'} ${target.path ?? ''}`.trim();
  if (framework === 'hono') {
    return { action: target.action, file: target.file, line: target.line, reason: `the action takes its key from a hidden ${field} field of the form that posts it, and apply does not edit Hono's JSX or html\`\` views: in the component that renders each form posting ${route}, add \`<input type="hidden" name="${field}" value={${KEY_FUNCTION}()} />\` (JSX; \`value="\${${KEY_FUNCTION}()}"\` inside html\`\`), ${KEY_FUNCTION} from the scaffold's index, so each render mints a fresh key` };
  }
  return { action: target.action, file: target.file, line: target.line, reason: `the action takes its key from a hidden ${field} field of the form that posts it, and apply adds that field for Express, Koa and Fastify views only: render each such form with a fresh key (the scaffold's ${KEY_FUNCTION}()) in a hidden input named ${field}` };
}
