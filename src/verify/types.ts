/** One verification failure: always the file it was found in and what is wrong, in words a reader can act on. */
export interface Finding {
  file: string;
  message: string;
}

export const formatFinding = (finding: Finding): string => `${finding.file}: ${finding.message}`;

/** A file of the document under verification, path relative to the document root (POSIX). */
export interface DocumentFile {
  path: string;
  contents: string;
}

export interface PageLink {
  href: string;
  /** "asset" is something the browser loads (stylesheet, image, frame); "link" is navigation. */
  kind: 'link' | 'asset';
  /** What carried it, for the message: "<a>", "<link>", "Markdown link". */
  via: string;
}

/**
 * The reading structure of one page, the same for HTML and Markdown, so the section, deliverable
 * and constraint checks are written once.
 */
export type OutlineBlock =
  | { kind: 'heading'; level: number; text: string; deliverable?: string }
  | { kind: 'table'; header: string[]; rows: string[][] }
  | { kind: 'code'; language: string; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'diagram' };

export interface ParsedPage {
  file: string;
  format: 'html' | 'md';
  anchors: Set<string>;
  links: PageLink[];
  blocks: OutlineBlock[];
  /** The footer's generation date, compared across the pages of a folder. */
  generatedOn?: string;
  findings: Finding[];
}
