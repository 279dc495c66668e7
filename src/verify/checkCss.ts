import type { Finding } from './types.js';
import { isNetworkUrl } from './urls.js';

export interface CssResult {
  findings: Finding[];
  /** Relative url()/@import targets, which must exist in the folder. */
  references: string[];
}

/**
 * Finds what CSS would fetch: @import and url(). A stylesheet is plain text, so a tokenizer-level pass
 * (comments removed, then the two constructs that load anything) is exact enough and needs no parser.
 */
export function checkCss(css: string, file: string, where: string): CssResult {
  const findings: Finding[] = [];
  const references: string[] = [];
  const text = css.replace(/\/\*[\s\S]*?\*\//g, '');
  for (const match of text.matchAll(/@import\s+(?:url\(\s*)?(['"]?)([^'")\s;]+)\1/gi)) {
    const target = match[2]!;
    if (isNetworkUrl(target)) findings.push({ file, message: `${where} imports ${target} from the network (@import); fonts and stylesheets must ship inside the document` });
    else references.push(target);
  }
  for (const match of text.matchAll(/url\(\s*(['"]?)(.*?)\1\s*\)/gi)) {
    const target = match[2]!.trim();
    if (target === '' || target.startsWith('#') || /^data:/i.test(target)) continue;
    if (isNetworkUrl(target)) findings.push({ file, message: `${where} loads ${target} from the network (url()); everything must ship inside the document` });
    else references.push(target);
  }
  return { findings, references };
}
