import { openBeautifulMermaid } from './beautifulMermaid.js';
import type { OpenRenderer, RendererName } from './diagramRenderer.js';
import { openMermaidCli } from './mermaidCli.js';

/** Every diagram renderer, by the name `--diagrams` accepts. Adding one is one file and one line. */
export const renderers: Record<RendererName, OpenRenderer> = {
  'beautiful-mermaid': openBeautifulMermaid,
  'mermaid-cli': openMermaidCli,
};

export const DEFAULT_RENDERER: RendererName = 'beautiful-mermaid';
