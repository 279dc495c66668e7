/** Format-agnostic page layout: single file or split folder, and which sections share a page. */
export { SPLIT_THRESHOLDS } from './thresholds.js';
export { addMeasures, figureMeasure, measureText, type TextMeasure } from './measureText.js';
export { groupSections, planLayout, type LayoutPlan, type PagePlan, type SectionSize, type SplitMode } from './planLayout.js';
