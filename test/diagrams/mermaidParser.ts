import { parseHTML } from 'linkedom';

/**
 * Mermaid's own parser in Node. mermaid touches `window`/`document` at import time, so a linkedom
 * window is installed first; parse() needs no layout, so nothing else from a browser is required.
 */
let ready: Promise<(text: string) => Promise<unknown>> | undefined;

export function mermaidParse(text: string): Promise<unknown> {
  ready ??= (async () => {
    const { window } = parseHTML('<!doctype html><html><head></head><body></body></html>');
    const g = globalThis as Record<string, unknown>;
    g.window ??= window;
    g.document ??= window.document;
    const { default: mermaid } = await import('mermaid');
    mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
    return (source: string) => mermaid.parse(source);
  })();
  return ready.then((parse) => parse(text));
}
