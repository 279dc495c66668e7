import type { Figure } from '../../diagrams/index.js';
import type { DocumentTree } from '../document/types.js';
import { renderSection } from '../html/renderHtml.js';
import { sectionMarkdown } from '../markdown/renderMarkdown.js';
import { addMeasures, figureMeasure, measureText, type SectionSize } from '../layout/index.js';

/**
 * Each top-level section's reading size in the chosen format. HTML diagrams are measured as a fixed
 * allowance rather than their SVG markup; Markdown diagrams are Mermaid text a reader really reads.
 */
export function measureSections(tree: DocumentTree, format: 'html' | 'md', figures: readonly Figure[]): SectionSize[] {
  const drawn = new Set(figures.filter((f) => format === 'md' || f.svg !== undefined).map((f) => f.id));
  const markdownFigures = new Map(figures.map((f) => [f.id, { title: f.title, caption: f.caption, mermaid: f.mermaid }]));
  return tree.sections.map((section) => {
    let size;
    if (format === 'md') {
      size = measureText(sectionMarkdown(section, { figures: markdownFigures }));
    } else {
      const count = section.blocks.filter((b) => b.type === 'figure' && drawn.has(b.figureId)).length;
      size = addMeasures(measureText(renderSection(section, { figures: new Map() })), figureMeasure(count));
    }
    return { id: section.id, number: section.number, title: section.title, size };
  });
}
