import type { Figure } from '../../diagrams/index.js';
import type { DocumentTree } from '../document/types.js';
import { planLayout, type LayoutPlan, type SplitMode } from '../layout/index.js';
import { measureSections } from './measureSections.js';
import { renderSplitHtml, type SplitFile } from './renderSplitHtml.js';
import { renderSplitMarkdown } from './renderSplitMarkdown.js';
import { splitFolder } from './splitFolder.js';

export interface SplitOptions {
  format: 'html' | 'md';
  /** Project-relative path of the single-file document; the folder takes its name without extension. */
  output: string;
  split: SplitMode;
  figures: readonly Figure[];
}

export interface SplitResult {
  plan: LayoutPlan;
  /** Project-relative files of the folder; empty when the plan is a single file. */
  files: SplitFile[];
}

/** Plans the layout and, when it says "split", renders the folder. */
export async function renderSplit(tree: DocumentTree, options: SplitOptions): Promise<SplitResult> {
  const plan = planLayout(measureSections(tree, options.format, options.figures), options.split);
  if (plan.kind === 'single') return { plan, files: [] };
  const folder = splitFolder(options.output);
  let files: SplitFile[];
  if (options.format === 'md') {
    const figures = new Map(options.figures.map((f) => [f.id, { title: f.title, caption: f.caption, mermaid: f.mermaid }]));
    files = renderSplitMarkdown(tree, figures, plan);
  } else {
    const { figureHtml } = await import('../../diagrams/index.js');
    const figures = new Map(options.figures.filter((f) => f.svg !== undefined).map((f) => [f.id, figureHtml(f)]));
    files = renderSplitHtml(tree, figures, plan);
  }
  return { plan, files: files.map((file) => ({ path: `${folder}/${file.path}`, contents: file.contents })) };
}
