import type { Block, DocumentTree } from '../document/types.js';

/**
 * The protected-action map for the index page: the table that follows the "Action map" deliverable
 * heading. The index shows a copy (its links point into the Actions page) while the deliverable itself,
 * with its anchor, stays in section 1 next to the per-action detail.
 */
export function actionMapTable(tree: DocumentTree): Extract<Block, { type: 'table' }> | undefined {
  for (const section of tree.sections) {
    const start = section.blocks.findIndex((b) => b.type === 'heading' && b.deliverable === 'action-map');
    if (start === -1) continue;
    const table = section.blocks.slice(start + 1).find((b) => b.type === 'table');
    return table?.type === 'table' ? table : undefined;
  }
  return undefined;
}
