import type { DocumentTree } from '../document/types.js';
import type { LayoutPlan } from '../layout/index.js';
import { codeSpan, escapeMarkdown } from '../markdown/escape.js';
import { blockMarkdown, footerMarkdown, GENERATED_NOTICE, sectionMarkdown, tocMarkdown, type MarkdownContext, type MarkdownFigure } from '../markdown/renderMarkdown.js';
import { actionMapTable } from './actionMapTable.js';
import { createGithubSlugger } from './githubSlugger.js';
import type { SplitFile } from './renderSplitHtml.js';
import { anchorHrefs, navText, splitPages, type SplitPage } from './splitPages.js';

const ACTIONS_HEADING = 'Protected actions';
const CONTENTS_HEADING = 'Contents';
const DELIVERABLES_HEADING = 'Final deliverables';

/** The Markdown folder: README.md as the index plus 01-*.md pages; Mermaid blocks exactly as in the single file. */
export function renderSplitMarkdown(tree: DocumentTree, figures: ReadonlyMap<string, MarkdownFigure>, plan: Extract<LayoutPlan, { kind: 'split' }>): SplitFile[] {
  const pages = splitPages(tree, plan, 'md');
  const resolveHref = anchorHrefs(pages, (page) => markdownAnchors(tree, page));
  const context: MarkdownContext = { figures, resolveHref };
  return pages.map((page, i) => {
    const parts = [GENERATED_NOTICE, `# ${escapeMarkdown(tree.title)}`, `_${escapeMarkdown(tree.subtitle)}_`, pagesNav(pages, page)];
    for (const section of page.sections) parts.push(sectionMarkdown(section, context));
    if (page.isIndex) {
      const map = actionMapTable(tree);
      if (map) parts.push(`## ${ACTIONS_HEADING}`, blockMarkdown(map, context));
      parts.push(`## ${CONTENTS_HEADING}`, tocMarkdown(tree, (s) => resolveHref(`#${s.id}`)));
      parts.push(deliverableFiles(tree, pages, resolveHref));
    }
    parts.push(pager(pages, i), footerMarkdown(tree.generatedOn));
    return { path: page.file, contents: `${parts.join('\n\n')}\n` };
  });
}

/**
 * GitHub slugs each file on its own, in heading order, so the anchors are computed the same way:
 * the page title first, then every section and sub-heading in the order they are written.
 */
function markdownAnchors(tree: DocumentTree, page: SplitPage): Map<string, string> {
  const slugger = createGithubSlugger();
  const anchors = new Map<string, string>();
  slugger.slug(tree.title);
  for (const section of page.sections) {
    anchors.set(section.id, slugger.slug(section.number > 0 ? `${section.number}. ${section.title}` : section.title));
    for (const block of section.blocks) if (block.type === 'heading') anchors.set(block.id, slugger.slug(block.text));
  }
  return anchors;
}

function pagesNav(pages: readonly SplitPage[], current: SplitPage): string {
  return pages.map((page) => (page === current ? `**${escapeMarkdown(navText(page))}**` : `[${escapeMarkdown(navText(page))}](${page.file})`)).join(' · ');
}

function pager(pages: readonly SplitPage[], index: number): string {
  const prev = pages[index - 1];
  const next = pages[index + 1];
  const parts = [
    ...(prev ? [`← Previous: [${escapeMarkdown(navText(prev))}](${prev.file})`] : []),
    index === 0 ? '**Home**' : `[Home](${pages[0]!.file})`,
    ...(next ? [`Next: [${escapeMarkdown(navText(next))}](${next.file}) →`] : []),
  ];
  return parts.join(' · ');
}

function deliverableFiles(tree: DocumentTree, pages: readonly SplitPage[], resolveHref: (href: string) => string): string {
  const rows = tree.deliverables.map((d) => {
    const section = tree.sections.find((s) => s.id === d.sectionId);
    const file = pages.find((p) => p.sections.some((s) => s.id === d.sectionId))?.file ?? '';
    const where = section ? escapeMarkdown(`${section.number}. ${section.title}`) : '';
    return `| ${d.number} | [${escapeMarkdown(d.title)}](${resolveHref(`#${d.anchor}`)}) | ${where} | [${codeSpan(file, true)}](${file}) |`;
  });
  return [`### ${DELIVERABLES_HEADING}`, '', '| # | Deliverable | Section | File |', '| --- | --- | --- | --- |', ...rows].join('\n');
}
