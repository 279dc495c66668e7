import { formsInTemplate, templateEngine, type TemplateForm } from '../parse/templateForms.js';
import type { EndpointFinding } from '../types.js';
import type { BuiltEndpoint } from './buildEndpoints.js';
import type { FunctionGraph } from './functionGraph.js';
import type { ProjectRecords } from './projectRecords.js';

/**
 * Which mutating routes a server-rendered form posts to: a form whose `action` names the route, or a form without one
 * on a page a GET route renders (the browser posts it back to that route's path). Such a route cannot be given an
 * Idempotency-Key header by its caller; init keys it by a hidden form field instead. Sets `forms` on those endpoints.
 */
export function linkServerForms(templates: ReadonlyMap<string, string>, endpoints: readonly BuiltEndpoint[], records: ProjectRecords, graph: FunctionGraph): void {
  const posted: Array<{ file: string; form: TemplateForm }> = [];
  for (const [file, text] of templates) {
    const engine = templateEngine(file);
    if (engine) for (const form of formsInTemplate(text, engine)) posted.push({ file, form });
  }
  if (posted.length === 0) return;
  const receivers = endpoints.filter((e) => e.finding.method !== 'GET');
  // A form posts; with method-override's `_method` the route it reaches has the tunnelled method.
  const receives = (finding: EndpointFinding, form: TemplateForm) => finding.method === 'ALL' || finding.method === (form.method ?? 'POST');
  const add = (finding: EndpointFinding, file: string, line: number) => {
    const forms = (finding.forms ??= []);
    if (!forms.some((f) => f.file === file && f.line === line)) forms.push({ file, line });
  };
  for (const { file, form } of posted) {
    if (form.action === undefined) continue;
    for (const { finding } of receivers) if (finding.prefixResolved && receives(finding, form) && samePath(finding.path, form.action)) add(finding, file, form.line);
  }
  // Forms that post back to the page: the GET routes whose handlers render the template, by its view name.
  const backPosting = new Map<string, Array<{ file: string; form: TemplateForm }>>();
  for (const entry of posted.filter((p) => p.form.action === undefined)) backPosting.set(entry.file, [...(backPosting.get(entry.file) ?? []), entry]);
  if (backPosting.size === 0) return;
  const pages = endpoints.filter((e) => e.finding.method === 'GET' && e.finding.prefixResolved);
  const renders = [...records.files.values()].flatMap((r) => r.facts.viewRenders.map((v) => ({ file: r.rel, ...v })));
  for (const [file, forms] of backPosting) {
    const seeds = renders.filter((r) => rendersTemplate(r.view, file)).map((r): [string, string] => [r.file, r.keys[0]!]);
    if (seeds.length === 0) continue;
    const rendering = graph.callers(seeds);
    for (const page of pages) {
      if (!page.route.handlerKeys.some((k) => graph.resolve(page.route.file, k).some((fn) => rendering.has(fn)))) continue;
      for (const { finding } of receivers) for (const { form } of forms) if (finding.prefixResolved && receives(finding, form) && samePath(finding.path, page.finding.path)) add(finding, file, form.line);
    }
  }
  for (const { finding } of receivers) finding.forms?.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
}

/** `render('api/stripe')` renders views/api/stripe.pug (or api/stripe/index.pug); a name may carry its extension. */
function rendersTemplate(view: string, file: string): boolean {
  const bare = file.replace(/\.[^./]+$/, '');
  const name = view.replace(/^\.?\//, '');
  const named = templateEngine(name) ? name.replace(/\.[^./]+$/, '') : name;
  return [named, `${named}/index`].some((candidate) => bare === candidate || bare.endsWith(`/${candidate}`));
}

/** Segment by segment: a route parameter or a form's computed segment matches any one segment. */
export function samePath(route: string, posted: string): boolean {
  const a = route.split('/').filter(Boolean);
  const b = posted.split('/').filter(Boolean);
  if (a.length !== b.length) return false;
  return a.every((segment, i) => {
    const other = b[i]!;
    const param = (s: string) => s.startsWith(':') || s.startsWith('{') || s.startsWith('[');
    return param(segment) || other === ':param' || segment.toLowerCase() === other.toLowerCase();
  });
}
