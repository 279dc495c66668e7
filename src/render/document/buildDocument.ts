import { stackSummary } from '../../model/stackSummary.js';
import { describeDuration } from '../../config/duration.js';
import type { DesignModel } from '../../model/types.js';
import type { CodeSamples } from '../code/index.js';
import { sectionsFor } from './sections.js';
import { DELIVERABLES, githubSlug, type DeliverableRef, type DocumentTree, type Section } from './types.js';

export type { CodeSamples };

export interface FigureRef {
  id: string;
  kind: 'flowchart' | 'saga';
  action?: string;
}

export function buildDocument(model: DesignModel, samples: CodeSamples, figures: readonly FigureRef[]): DocumentTree {
  const sections = sectionsFor(model, samples, figures);
  dedupeIds(sections);
  linkActionMap(sections, model);
  const deliverables: DeliverableRef[] = [];
  DELIVERABLES.forEach((deliverable, index) => {
    for (const section of sections) {
      const block = section.blocks.find((b) => b.type === 'heading' && b.deliverable === deliverable.id);
      if (block && block.type === 'heading') {
        deliverables.push({ id: deliverable.id, number: index + 1, title: deliverable.title, sectionId: section.id, anchor: block.id });
        return;
      }
    }
  });
  const actions = model.actions.map((a) => a.name);
  return {
    title: model.title,
    subtitle: `${actions.length} protected action${actions.length === 1 ? '' : 's'} · ${stackSummary(model.stack)} · retention ${describeDuration(model.retention.effectiveMs)}`,
    generatedOn: model.generatedOn,
    sections,
    deliverables,
  };
}

export { githubSlug };

/** GitHub numbers repeated slugs -1, -2 … in document order; HTML ids follow the same rule so anchors match. */
function dedupeIds(sections: Section[]): void {
  const seen = new Map<string, number>();
  const claim = (id: string) => {
    const base = id === '' ? 'section' : id;
    const count = seen.get(base);
    seen.set(base, (count ?? -1) + 1);
    return count === undefined ? base : `${base}-${count + 1}`;
  };
  for (const section of sections) {
    section.id = claim(section.id);
    for (const block of section.blocks) if (block.type === 'heading') block.id = claim(block.id);
  }
}

function linkActionMap(sections: Section[], model: DesignModel): void {
  const analysis = sections.find((s) => s.number === 1);
  if (!analysis) return;
  const ids = new Map<string, string>();
  for (const block of analysis.blocks) if (block.type === 'heading' && !block.deliverable) ids.set(block.text, block.id);
  for (const block of analysis.blocks) {
    if (block.type !== 'table') continue;
    for (const row of block.rows) {
      for (const part of row[0] ?? []) {
        if (typeof part === 'object' && 'link' in part && model.actions.some((a) => a.name === part.link.text)) {
          part.link.href = `#${ids.get(part.link.text) ?? githubSlug(part.link.text)}`;
        }
      }
    }
  }
}
