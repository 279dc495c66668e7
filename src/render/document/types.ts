/**
 * A format-neutral document: the HTML and Markdown renderers and the split-folder layout all
 * work from this tree, so both formats carry the same sections, tables and code by construction.
 * Text here is plain; each renderer escapes it for where it lands.
 */
/** `{ br: true }`: a line break, for one entry a line in a table cell (HTML `<br>`, Markdown tables too). */
export type Inline = string | { code: string } | { strong: string } | { link: { href: string; text: string } } | { br: true };

export type Block =
  | { type: 'p'; content: Inline[] }
  | { type: 'list'; ordered?: boolean; items: Inline[][] }
  | { type: 'table'; columns: string[]; rows: Inline[][][] }
  | { type: 'code'; language: string; code: string; title?: string }
  | { type: 'heading'; text: string; id: string; deliverable?: DeliverableId }
  | { type: 'callout'; tone: 'note' | 'warning'; content: Inline[] }
  | { type: 'figure'; figureId: string };

export interface Section {
  /** GitHub-style slug of the heading, identical in HTML and Markdown. */
  id: string;
  /** 1..12 for the spec's sections, 13+ for additions; 0 for the overview. */
  number: number;
  title: string;
  summary: string;
  blocks: Block[];
}

export const DELIVERABLES = [
  { id: 'action-map', title: 'Action map' },
  { id: 'store-ddl', title: 'Idempotency store DDL' },
  { id: 'middleware', title: 'Middleware' },
  { id: 'fingerprint-utility', title: 'Fingerprint utility' },
  { id: 'cleanup-job', title: 'Cleanup job' },
  { id: 'test-suite', title: 'Test suite skeleton' },
  { id: 'monitoring-config', title: 'Monitoring config' },
  { id: 'build-order', title: 'Build order' },
  { id: 'runbook', title: 'Operational runbook' },
  { id: 'flow-diagrams', title: 'Flow diagrams' },
] as const;

export type DeliverableId = (typeof DELIVERABLES)[number]['id'];

export interface DeliverableRef {
  id: DeliverableId;
  number: number;
  title: string;
  sectionId: string;
  anchor: string;
}

export interface DocumentTree {
  title: string;
  subtitle: string;
  generatedOn: string;
  sections: Section[];
  deliverables: DeliverableRef[];
}

/** GitHub's heading slug: lowercase, drop punctuation except - and _, spaces to dashes. */
export function githubSlug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
