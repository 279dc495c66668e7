import path from 'node:path';
import type { Finding, PageLink, ParsedPage } from './types.js';
import { hasScheme, isNetworkUrl, normalizeUrl, schemeProblem } from './urls.js';

export interface LinkTargets {
  /** Every file of the document, path relative to its root. */
  files: ReadonlySet<string>;
  /** Parsed pages by path, for anchors. */
  pages: ReadonlyMap<string, ParsedPage>;
  /** For a single file checked on disk: whether a target outside the document exists. */
  existsOutside?: (relative: string) => boolean;
  /** A folder must stay whole when moved, so nothing may point outside it. */
  folder: boolean;
}

/** Relative links resolve to a file that was written and an anchor that exists in it. */
export function verifyLinks(page: ParsedPage, targets: LinkTargets): Finding[] {
  const findings: Finding[] = [];
  const seen = new Set<string>();
  for (const link of page.links) {
    const key = `${link.kind} ${link.href}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const problem = checkLink(page, link, targets);
    if (problem) findings.push({ file: page.file, message: problem });
  }
  return findings;
}

function checkLink(page: ParsedPage, link: PageLink, targets: LinkTargets): string | undefined {
  const href = normalizeUrl(link.href);
  if (href === '') return `has an empty ${link.via} link`;
  // HTML attributes were checked where they were found; Markdown links and CSS references are checked here.
  const problem = schemeProblem(href, link.kind === 'link' ? 'link' : link.via === 'Markdown image' || link.via === 'inline CSS' ? 'image' : 'resource');
  if (problem) return `${link.via} uses ${problem}`;
  if (hasScheme(href)) {
    if (/^file:/i.test(href)) return `${link.via} points at an absolute file URL ${href}; use a relative link`;
    // Navigation to the web is fine; loading from it was already reported by the HTML/CSS checks.
    return link.kind === 'asset' && isNetworkUrl(href) ? `loads ${href} from the network via ${link.via}` : undefined;
  }
  if (href.startsWith('/') || href.startsWith('\\')) return `${link.via} uses the absolute path ${href}, which breaks when the document is moved; use a relative link`;
  const hash = href.indexOf('#');
  const rawPath = (hash === -1 ? href : href.slice(0, hash)).split('?')[0]!;
  const fragment = hash === -1 ? undefined : safeDecode(href.slice(hash + 1));
  // Browsers read a backslash in a path as a slash, so "..\\..\\etc" climbs like "../../etc".
  const decoded = safeDecode(rawPath).replace(/\\/g, '/');
  const target = rawPath === '' ? page.file : path.posix.normalize(path.posix.join(path.posix.dirname(page.file), decoded));
  if (target.startsWith('../') || target === '..' || target.startsWith('/')) {
    return targets.folder
      ? `${link.via} "${href}" points outside the document folder, so the folder breaks when moved or zipped`
      : `${link.via} "${href}" points outside the folder the document is in (${target}); a delivered document links only to itself and files beside it`;
  }
  if (!targets.files.has(target)) {
    if (!targets.folder && targets.existsOutside?.(target)) return undefined;
    return `${link.via} "${href}" points to ${target}, which does not exist`;
  }
  const destination = targets.pages.get(target);
  if (fragment === undefined || fragment === '' || !destination) return undefined;
  if (!destination.anchors.has(fragment)) {
    return `${link.via} "${href}" points to the anchor #${fragment}, which ${target === page.file ? 'this file does not have' : `${target} does not have`}`;
  }
  return undefined;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
