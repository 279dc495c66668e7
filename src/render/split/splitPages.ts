import type { DocumentTree, Section } from '../document/types.js';
import type { LayoutPlan } from '../layout/index.js';
import { splitIndexName } from './splitFolder.js';

/** One file of a split folder, index first, then content pages in reading order. */
export interface SplitPage {
  /** File name inside the folder, e.g. "02-keys-and-fingerprints.html". */
  file: string;
  /** Nav text, e.g. "Keys and fingerprints". */
  label: string;
  /** Section numbers on the page, e.g. "2–3"; empty for the index. */
  numbers: string;
  sections: Section[];
  isIndex: boolean;
}

export function splitPages(tree: DocumentTree, plan: Extract<LayoutPlan, { kind: 'split' }>, format: 'html' | 'md'): SplitPage[] {
  const byId = new Map(tree.sections.map((s) => [s.id, s]));
  const pick = (ids: readonly string[]) => ids.map((id) => byId.get(id)).filter((s): s is Section => s !== undefined);
  const index: SplitPage = { file: splitIndexName(format), label: 'Overview', numbers: '', sections: pick(plan.indexSectionIds), isIndex: true };
  return [
    index,
    ...plan.pages.map((page) => ({ file: `${page.stem}.${format}`, label: page.label, numbers: page.numbers, sections: pick(page.sectionIds), isIndex: false })),
  ];
}

/**
 * Nav text for a page: its section numbers first, so the nav reads in the same numbering as the index.
 * No dot after the number: "1. Actions" at the start of Markdown link text would be escaped as a list.
 */
export function navText(page: SplitPage): string {
  return page.numbers === '' ? page.label : `${page.numbers} ${page.label}`;
}

/**
 * Where each anchor of the tree lives, so "#anchor" links can become "page#anchor". `slugFor` maps the
 * tree's id to the anchor the page really has (HTML keeps ids; Markdown re-slugs per file).
 */
export function anchorHrefs(pages: readonly SplitPage[], anchorsOf: (page: SplitPage) => ReadonlyMap<string, string>): (href: string) => string {
  const where = new Map<string, string>();
  for (const page of pages) {
    for (const [id, anchor] of anchorsOf(page)) if (!where.has(id)) where.set(id, `${page.file}#${anchor}`);
  }
  return (href) => (href.startsWith('#') ? (where.get(href.slice(1)) ?? href) : href);
}
