import type { SourceFile } from 'ts-morph';

/** The views' local that mints a key per render: a function, so every form rendered gets a fresh one. */
export const FORM_KEY_LOCAL = 'idempotencyKey';

/** The scaffold index's export the local is bound to. */
export const KEY_FUNCTION = 'newIdempotencyKey';

/** A project source file that may set up the views, parsed on demand in its own import style. */
export interface ViewsSource {
  file: string;
  text: string;
  /** The file parsed (a fresh tree each call) and the scaffold index's specifier as this file spells imports. */
  parse(): { sf: SourceFile; specifier: string };
}

/** What one framework's pass did: the files it changed (whole new text) and what it left to the user. */
export interface ViewsKeyResult {
  changed: Array<{ file: string; text: string; summary: string }>;
  manual: Array<{ file?: string; line?: number; reason: string }>;
}

/**
 * Gives a framework's views the key function where the app sets them up. `mentions` is a cheap text test: only files
 * it matches are parsed. Idempotent: a place that already gives the key is left alone.
 */
export interface ViewsKeyWiring {
  mentions: RegExp;
  wire(sources: readonly ViewsSource[]): ViewsKeyResult;
}
