/**
 * The spec's split thresholds, in one place so the decision can be explained and tuned.
 * Sizes are "reading size": the rendered text a person scrolls through. Inline SVG markup, Mermaid
 * source comments and the stylesheet are machine-only bytes, so each diagram counts as a fixed
 * allowance instead; otherwise one detailed diagram would push a short design into a folder.
 */
export const SPLIT_THRESHOLDS = {
  /** "past roughly 1,500 lines" */
  maxLines: 1500,
  /** "(~100 KB)" */
  maxBytes: 100 * 1024,
  /** "more than about six top-level sections a reader would navigate between" */
  maxNavigableSections: 6,
  /**
   * A section counts as one a reader navigates to (rather than scrolls past) once it is longer than
   * this many screenfuls. Every design has the spec's 12 sections plus overview and runbook, so counting
   * all of them would split even a one-action design, which the spec says is worse than one page.
   * Measured on the fixtures: one to three actions have 2 such sections, twelve actions have 7.
   */
  navigableScreens: 3,
  /** Lines that fit one laptop screen of this document's typography. */
  screenLines: 45,
  /** Wrapped-line width used to turn long rendered lines (table rows, paragraphs) into screen lines. */
  screenColumns: 120,
  /** A diagram reads like about one screen. */
  figureLines: 45,
  minPages: 4,
  maxPages: 8,
  /** Pages are sized towards this many screen lines, then clamped to 4–8 pages. */
  targetPageLines: 450,
} as const;
