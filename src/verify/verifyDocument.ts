import path from 'node:path';
import { checkCss } from './checkCss.js';
import { locateBlocks } from './outline.js';
import { parseHtmlPage } from './parseHtmlPage.js';
import { parseMarkdownPage } from './parseMarkdownPage.js';
import type { DocumentFile, Finding, ParsedPage } from './types.js';
import { verifyConstraints } from './verifyConstraints.js';
import { verifyLinks } from './verifyLinks.js';
import { verifySections } from './verifySections.js';

export interface VerifyDocumentOptions {
  /** How findings name the document as a whole ("docs/idempotency-design/"). */
  label: string;
  /** Prefix for file names in findings, so they read as project paths. */
  prefix?: string;
  /** True for a split folder: an index must exist and nothing may point outside it. */
  folder: boolean;
  /** For a single file on disk: whether a relative target beside it exists. */
  existsOutside?: (relative: string) => boolean;
}

const INDEX_FILES = ['index.html', 'README.md'];

/**
 * Verifies a document held in memory (one file, or every file of a split folder, paths relative to the
 * folder): links and anchors, self-containment, diagrams, the 12 sections, the 10 deliverables and the
 * 7 testable constraints. Pure, so generate can run it before anything is written.
 */
export function verifyDocument(files: readonly DocumentFile[], options: VerifyDocumentOptions): Finding[] {
  const findings: Finding[] = [];
  const pages = new Map<string, ParsedPage>();
  for (const file of files) {
    if (/\.html?$/i.test(file.path)) pages.set(file.path, parseHtmlPage(file.path, file.contents));
    else if (/\.(md|markdown)$/i.test(file.path)) pages.set(file.path, parseMarkdownPage(file.path, file.contents));
  }
  const paths = new Set(files.map((f) => f.path));
  for (const file of files.filter((f) => /\.css$/i.test(f.path))) {
    const css = checkCss(file.contents, file.path, 'the stylesheet');
    findings.push(...css.findings);
    findings.push(
      ...css.references
        .map((reference) => path.posix.normalize(path.posix.join(path.posix.dirname(file.path), reference.split(/[?#]/)[0]!)))
        .filter((target) => !paths.has(target))
        .map((target) => ({ file: file.path, message: `the stylesheet refers to ${target}, which does not exist` })),
    );
  }
  const ordered = orderPages([...pages.values()]);
  if (ordered.length === 0) findings.push({ file: options.label, message: 'contains no HTML or Markdown document' });
  if (options.folder && !INDEX_FILES.some((name) => paths.has(name))) findings.push({ file: options.label, message: 'has no index.html or README.md to start from' });
  const targets = { files: paths, pages, folder: options.folder, existsOutside: options.existsOutside };
  for (const page of ordered) findings.push(...page.findings, ...verifyLinks(page, targets));
  if (options.folder) findings.push(...verifySameDate(ordered));
  const located = locateBlocks(ordered);
  findings.push(...verifySections(located, options.label), ...verifyConstraints(located, options.label));
  const prefix = options.prefix ?? '';
  return findings.map((f) => (f.file === options.label ? f : { ...f, file: `${prefix}${f.file}` }));
}

/** Index first, then pages in file-name order (which is reading order for numbered pages). */
function orderPages(pages: ParsedPage[]): ParsedPage[] {
  const rank = (p: ParsedPage) => (INDEX_FILES.includes(p.file) ? 0 : 1);
  return pages.sort((a, b) => rank(a) - rank(b) || a.file.localeCompare(b.file));
}

/** The folder is one document: every page carries the same generation date. */
function verifySameDate(pages: readonly ParsedPage[]): Finding[] {
  const first = pages.find((p) => p.generatedOn !== undefined);
  return pages
    .filter((p) => p.generatedOn === undefined || p.generatedOn !== first?.generatedOn)
    .map((p) => ({
      file: p.file,
      message: p.generatedOn === undefined ? 'has no generation date in its footer' : `says it was generated on ${p.generatedOn}, but ${first!.file} says ${first!.generatedOn}`,
    }));
}
