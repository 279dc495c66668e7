import { SPLIT_THRESHOLDS } from './thresholds.js';

/** How long a stretch of rendered text reads: file lines and bytes (the spec's units) and wrapped screen lines. */
export interface TextMeasure {
  lines: number;
  bytes: number;
  screenLines: number;
}

export const EMPTY_MEASURE: TextMeasure = { lines: 0, bytes: 0, screenLines: 0 };

export function measureText(text: string): TextMeasure {
  if (text === '') return EMPTY_MEASURE;
  const rows = text.split('\n');
  const width = SPLIT_THRESHOLDS.screenColumns;
  return {
    lines: rows.length,
    bytes: Buffer.byteLength(text, 'utf8'),
    // A table row or paragraph is one source line but wraps on screen; that is what a reader scrolls.
    screenLines: rows.reduce((sum, row) => sum + Math.max(1, Math.ceil(row.length / width)), 0),
  };
}

export function addMeasures(...measures: readonly TextMeasure[]): TextMeasure {
  return measures.reduce((sum, m) => ({ lines: sum.lines + m.lines, bytes: sum.bytes + m.bytes, screenLines: sum.screenLines + m.screenLines }), EMPTY_MEASURE);
}

/** The allowance for diagrams, whose SVG markup says nothing about how long they read. */
export function figureMeasure(count: number): TextMeasure {
  const lines = SPLIT_THRESHOLDS.figureLines * count;
  return { lines, bytes: 0, screenLines: lines };
}
