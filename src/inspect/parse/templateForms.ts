/**
 * Forms in server-side view templates (Pug, EJS, Handlebars, Nunjucks): where each POST form starts, where it posts,
 * and where a hidden field goes inside it. Line-based and tolerant: a template this cannot read yields no form rather
 * than a wrong one. Used by inspection (which route a page's form posts to) and by apply (the hidden key field).
 */

export type TemplateEngine = 'pug' | 'ejs' | 'handlebars' | 'nunjucks';

const ENGINES: Record<string, TemplateEngine> = { '.pug': 'pug', '.jade': 'pug', '.ejs': 'ejs', '.hbs': 'handlebars', '.handlebars': 'handlebars', '.njk': 'nunjucks' };

/** The engine of a template file, by extension; undefined for anything else. */
export function templateEngine(file: string): TemplateEngine | undefined {
  const dot = file.lastIndexOf('.');
  return dot < 0 ? undefined : ENGINES[file.slice(dot).toLowerCase()];
}

export interface TemplateForm {
  /** 1-based line of the form's opening tag. */
  line: number;
  /**
   * Where the form posts: a path whose interpolated segments read `:param`, or undefined when it has no `action`
   * (the browser posts back to the page's own URL). Absent forms are those posting elsewhere (another host, a value
   * this cannot read).
   */
  action: string | undefined;
  /** Offset in the text right after the opening tag (HTML-like) or after the line that closes the form's attributes (Pug). */
  bodyStart: number;
  /** Indentation of the form's first child, as the template writes it. */
  childIndent: string;
  /** Offset where the form's body ends (its closing tag, or the first line not indented under it). */
  bodyEnd: number;
  /**
   * The method the route really has when the form tunnels another through POST (method-override's hidden `_method`
   * field or `?_method=` query): PUT, PATCH or DELETE. Absent for a plain POST.
   */
  method?: 'PUT' | 'PATCH' | 'DELETE';
}

/** POST forms of a template, in source order. */
export function formsInTemplate(text: string, engine: TemplateEngine): TemplateForm[] {
  return (engine === 'pug' ? pugForms(text) : markupForms(text)).map((form) => {
    const method = overriddenMethod(text.slice(form.bodyStart, form.bodyEnd)) ?? form.method;
    return method ? { ...form, method } : form;
  });
}

const OVERRIDES = new Set(['PUT', 'PATCH', 'DELETE']);

/** method-override's hidden field: `<input type="hidden" name="_method" value="DELETE">`, Pug's `input(name='_method', value='PUT')`. */
function overriddenMethod(body: string): TemplateForm['method'] {
  for (const match of body.matchAll(/name\s*=\s*(['"])_method\1/g)) {
    // The element holding it: from its `<` (or, in Pug, its line) to its `>` or the end of the line.
    const tag = body.lastIndexOf('<', match.index);
    const from = tag >= 0 && !body.slice(tag, match.index).includes('>') ? tag : body.lastIndexOf('\n', match.index) + 1;
    const ends = [body.indexOf('>', match.index), body.indexOf('\n', match.index)].filter((i) => i >= 0);
    const element = body.slice(from, ends.length > 0 ? Math.min(...ends) : body.length);
    const value = /value\s*=\s*(['"])(\w+)\1/.exec(element)?.[2]?.toUpperCase();
    if (value && OVERRIDES.has(value)) return value as TemplateForm['method'];
  }
  return undefined;
}

/** `?_method=DELETE` in a form's action. */
function queryMethod(raw: string): TemplateForm['method'] {
  const value = /[?&]_method=(\w+)/.exec(raw)?.[1]?.toUpperCase();
  return value && OVERRIDES.has(value) ? (value as TemplateForm['method']) : undefined;
}

/** The hidden input carrying a freshly minted key, in the engine's syntax (`idempotencyKey` is a function in the view's locals). */
export function hiddenKeyInput(engine: TemplateEngine, field: string, local: string): string {
  switch (engine) {
    case 'pug':
      return `input(type='hidden', name='${field}', value=${local}())`;
    case 'ejs':
      return `<input type="hidden" name="${field}" value="<%= ${local}() %>">`;
    case 'handlebars':
      // Handlebars calls a function it finds in the context.
      return `<input type="hidden" name="${field}" value="{{${local}}}">`;
    case 'nunjucks':
      return `<input type="hidden" name="${field}" value="{{ ${local}() }}">`;
  }
}

/** Whether the form already carries a field of that name (an earlier apply, or the user's own). */
export function formHasField(text: string, form: TemplateForm, field: string): boolean {
  const body = text.slice(form.bodyStart, form.bodyEnd);
  return new RegExp(`name\\s*=\\s*(['"])${field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\1`).test(body);
}

const lineOf = (text: string, offset: number) => {
  let line = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
};

const indentOf = (line: string) => /^[ \t]*/.exec(line)![0];

/** `'/x'`, `"/x"`, `` `/x/${id}` `` or `'/x/' + id` as a path with `:param` for what is computed; undefined otherwise. */
function pugActionPath(expression: string): string | undefined {
  const parts = expression.split(/\s*\+\s*/);
  let path = '';
  for (const part of parts) {
    const quoted = /^(['"])(.*)\1$/.exec(part) ?? /^(`)([^`]*)`$/.exec(part);
    if (quoted) path += quoted[1] === '`' ? quoted[2]!.replace(/\$\{[^}]*\}/g, ':param') : quoted[2]!;
    else if (/^[\w$.[\]'"]+$/.test(part)) path += ':param';
    else return undefined;
  }
  return routePath(path);
}

/** A same-origin path (query and fragment dropped); undefined for another origin or a blank. */
function routePath(raw: string): string | undefined {
  const path = raw.replace(/[?#].*$/, '').trim();
  if (path === '' || !path.startsWith('/') || path.startsWith('//')) return undefined;
  return path.replace(/:param[^/]*/g, ':param');
}

/** Pug attribute lists: `name=value` pairs split on commas outside quotes, brackets and parentheses. */
function pugAttributes(source: string): Map<string, string> {
  const out = new Map<string, string>();
  let depth = 0;
  let quote = '';
  let start = 0;
  const push = (end: number) => {
    const pair = source.slice(start, end).trim();
    const eq = pair.indexOf('=');
    if (eq > 0) out.set(pair.slice(0, eq).replace(/!$/, '').trim().toLowerCase(), pair.slice(eq + 1).trim());
    start = end + 1;
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if ((c === ',' || c === '\n') && depth === 0) push(i);
  }
  push(source.length);
  return out;
}

const PUG_FORM = /^([ \t]*)form(?:[.#][\w-]+)*(\()?/;

function pugForms(text: string): TemplateForm[] {
  const lines = text.split('\n');
  const starts: number[] = [];
  let offset = 0;
  for (const line of lines) {
    starts.push(offset);
    offset += line.length + 1;
  }
  const forms: TemplateForm[] = [];
  for (let i = 0; i < lines.length; i++) {
    const match = PUG_FORM.exec(lines[i]!);
    if (!match || !/^[ \t]*form(?:[.#][\w-]+)*(?:\(|$)/.test(lines[i]!.trimEnd())) continue;
    const indent = match[1]!;
    let attributes = '';
    let closeLine = i;
    if (match[2]) {
      // The attribute list may run over several lines: read to its closing parenthesis.
      const open = starts[i]! + match[0].length;
      let depth = 1;
      let quote = '';
      let at = open;
      for (; at < text.length && depth > 0; at++) {
        const c = text[at]!;
        if (quote) {
          if (c === '\\') at++;
          else if (c === quote) quote = '';
        } else if (c === "'" || c === '"' || c === '`') quote = c;
        else if (c === '(') depth++;
        else if (c === ')') depth--;
      }
      if (depth !== 0) continue;
      attributes = text.slice(open, at - 1);
      closeLine = lineOf(text, at - 1) - 1;
      // Text after the attributes (`form(...) Submit`) is inline content: a child line would then be plain text.
      if (text.slice(at, starts[closeLine]! + lines[closeLine]!.length).trim() !== '') continue;
    }
    const attrs = pugAttributes(attributes);
    const method = attrs.get('method');
    if (!method || !/^(['"`])post\1$/i.test(method)) continue;
    const actionExpr = attrs.get('action');
    const action = actionExpr === undefined ? undefined : pugActionPath(actionExpr);
    const tunnelled = actionExpr === undefined ? undefined : queryMethod(actionExpr);
    if (actionExpr !== undefined && action === undefined) continue;
    // The body: following lines indented deeper than the form (blank lines belong to it).
    let end = closeLine + 1;
    let childIndent: string | undefined;
    while (end < lines.length) {
      const line = lines[end]!;
      if (line.trim() === '') {
        end++;
        continue;
      }
      const own = indentOf(line);
      if (own.length <= indent.length) break;
      childIndent ??= own;
      end++;
    }
    forms.push({
      line: i + 1,
      action,
      bodyStart: starts[closeLine]! + lines[closeLine]!.length,
      childIndent: childIndent ?? `${indent}  `,
      bodyEnd: end < lines.length ? starts[end]! - 1 : text.length,
      ...(tunnelled ? { method: tunnelled } : {}),
    });
  }
  return forms;
}

/** Template tags that may hold `>` or quotes of their own: skipped whole inside an opening tag. */
const TEMPLATE_TAGS: Array<[string, string]> = [['<%', '%>'], ['{{', '}}'], ['{%', '%}']];

/** The attributes of an opening tag starting at `from` (just past `<form`), and the offset after its `>`. */
function openingTag(text: string, from: number): { attributes: string; end: number } | undefined {
  let quote = '';
  for (let i = from; i < text.length; i++) {
    const tag = TEMPLATE_TAGS.find(([open]) => text.startsWith(open, i));
    if (tag) {
      const close = text.indexOf(tag[1], i + tag[0].length);
      if (close < 0) return undefined;
      i = close + tag[1].length - 1;
      continue;
    }
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return { attributes: text.slice(from, i), end: i + 1 };
  }
  return undefined;
}

/** `name="value"` pairs of an HTML opening tag, template tags inside a value kept as written. */
function markupAttributes(source: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const match of source.matchAll(/([\w:-]+)\s*=\s*("([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
    out.set(match[1]!.toLowerCase(), match[3] ?? match[4] ?? match[5] ?? '');
  }
  return out;
}

function markupForms(text: string): TemplateForm[] {
  const forms: TemplateForm[] = [];
  for (const match of text.matchAll(/<form\b/gi)) {
    const start = match.index;
    const tag = openingTag(text, start + match[0].length);
    if (!tag) continue;
    const attrs = markupAttributes(tag.attributes);
    if ((attrs.get('method') ?? '').toLowerCase() !== 'post') continue;
    const raw = attrs.get('action');
    const action = raw === undefined ? undefined : routePath(raw.replace(/<%[\s\S]*?%>|\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g, ':param'));
    if (raw !== undefined && action === undefined) continue;
    const close = text.slice(tag.end).search(/<\/form\s*>/i);
    const bodyEnd = close < 0 ? text.length : tag.end + close;
    const lineStart = text.lastIndexOf('\n', start) + 1;
    const formIndent = indentOf(text.slice(lineStart));
    const next = /\n([ \t]*)\S/.exec(text.slice(tag.end, bodyEnd));
    const childIndent = next && next[1]!.length > formIndent.length ? next[1]! : `${formIndent}  `;
    const tunnelled = raw === undefined ? undefined : queryMethod(raw);
    forms.push({ line: lineOf(text, start), action, bodyStart: tag.end, childIndent, bodyEnd, ...(tunnelled ? { method: tunnelled } : {}) });
  }
  return forms;
}
