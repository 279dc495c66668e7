import { githubSlug } from '../document/types.js';
import { andList } from '../../model/labels.js';

/**
 * Short names for the design's sections, so pages read like the spec's example folder
 * (01-keys-and-fingerprints, 03-concurrency-and-recovery) instead of concatenated titles.
 * Keyed by section number; a section this table does not know falls back to its title.
 */
const SHORT_NAMES: Readonly<Record<number, string>> = {
  1: 'Actions',
  2: 'Keys',
  3: 'Fingerprints',
  4: 'Concurrency',
  5: 'Recovery',
  6: 'Payments',
  7: 'Sagas',
  8: 'Security',
  9: 'Anti-patterns',
  10: 'Monitoring',
  11: 'Tests',
  12: 'Build order',
  13: 'Runbook',
};

export interface NamedSection {
  number: number;
  title: string;
}

function shortName(section: NamedSection): string {
  return SHORT_NAMES[section.number] ?? section.title.split(/\s+/).slice(0, 3).join(' ');
}

/** "Keys and fingerprints", "Recovery, payments and sagas"; past three names, "Monitoring to runbook" stays short. */
export function pageLabel(sections: readonly NamedSection[]): string {
  const names = sections.map(shortName).map((name, i) => (i === 0 ? name : name.charAt(0).toLowerCase() + name.slice(1)));
  if (names.length <= 1) return names[0] ?? '';
  if (names.length > 3) return `${names[0]!} to ${names[names.length - 1]!}`;
  return andList(names);
}

/** "2–3" for the nav, so page entries carry the same section numbers as the index. */
export function pageNumbers(sections: readonly NamedSection[]): string {
  const first = sections[0]?.number ?? 0;
  const last = sections[sections.length - 1]?.number ?? first;
  return first === last ? String(first) : `${first}–${last}`;
}

/** "02-keys-and-fingerprints": numbered so a file listing shows reading order. */
export function pageStem(position: number, sections: readonly NamedSection[]): string {
  const slug = githubSlug(pageLabel(sections).replace(/,/g, ''))
    .replace(/[^a-z0-9-]/g, '')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '');
  return `${String(position).padStart(2, '0')}-${slug || 'section'}`;
}
