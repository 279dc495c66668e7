import type { DocumentTree, Section } from '../document/types.js';
import { compileTemplate, readTemplate } from '../templates.js';
import { escapeHtml } from './escape.js';
import { renderBlocks, renderInline, type BlockContext } from './renderBlocks.js';

interface PageView {
  title: string;
  subtitle: string;
  generatedOn: string;
  styles: string;
  stylesheetHref: string | undefined;
  nav: string;
  content: string;
  pager: string;
}

let page: ((view: PageView) => string) | undefined;

export function renderPage(view: PageView): string {
  page ??= compileTemplate<PageView>('html/page.hbs', { escape: true });
  return page(view);
}

export function documentStyles(): string {
  return readTemplate('html/styles.css').trimEnd();
}

export function renderSection(section: Section, context: BlockContext): string {
  const title = section.number > 0 ? `${section.number}. ${section.title}` : section.title;
  return `<section id="${escapeHtml(section.id)}">
<h2>${escapeHtml(title)}</h2>
<p class="summary">${escapeHtml(section.summary)}</p>
${renderBlocks(section.blocks, context)}
</section>`;
}

export function renderToc(tree: DocumentTree, href: (section: Section) => string): string {
  const items = tree.sections
    .map((s) => {
      const title = s.number > 0 ? `${s.number}. ${s.title}` : s.title;
      return `<li><a href="${escapeHtml(href(s))}">${escapeHtml(title)}</a><span class="summary">${escapeHtml(s.summary)}</span></li>`;
    })
    .join('\n');
  return `<nav class="toc" aria-label="Contents">\n<h2>Contents</h2>\n<ol>\n${items}\n</ol>\n</nav>`;
}

export function renderDeliverableIndex(tree: DocumentTree, href: (anchor: string, sectionId: string) => string, context: BlockContext): string {
  const rows = tree.deliverables
    .map((d) => {
      const section = tree.sections.find((s) => s.id === d.sectionId)!;
      return `<tr><td>${d.number}</td><td><a href="${escapeHtml(href(d.anchor, d.sectionId))}">${escapeHtml(d.title)}</a></td><td>${renderInline([`${section.number}. ${section.title}`], context)}</td></tr>`;
    })
    .join('\n');
  return `<h3 id="final-deliverables">Final deliverables</h3>\n<div class="table-wrap"><table>\n<thead><tr><th scope="col">#</th><th scope="col">Deliverable</th><th scope="col">Section</th></tr></thead>\n<tbody>\n${rows}\n</tbody>\n</table></div>`;
}

/** The single self-contained file: inline CSS, no script, every diagram inline. */
export function renderHtml(tree: DocumentTree, figures: ReadonlyMap<string, string>): string {
  const context: BlockContext = { figures };
  const [overview, ...rest] = tree.sections;
  const body = [
    overview ? renderSection(overview, context).replace(/<\/section>$/, `${renderDeliverableIndex(tree, (anchor) => `#${anchor}`, context)}\n</section>`) : '',
    ...rest.map((s) => renderSection(s, context)),
  ].join('\n');
  return renderPage({
    title: tree.title,
    subtitle: tree.subtitle,
    generatedOn: tree.generatedOn,
    styles: documentStyles(),
    stylesheetHref: undefined,
    nav: renderToc(tree, (s) => `#${s.id}`),
    content: body,
    pager: '',
  });
}
