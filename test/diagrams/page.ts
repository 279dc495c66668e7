import { figureHtml } from '../../src/diagrams/figureHtml.js';
import type { Figure } from '../../src/diagrams/figure.js';

/**
 * A stand-in for the document page: the CSS custom properties the diagrams share with the
 * document (light and dark), a typical reading column, and the figures as the HTML renderer will
 * insert them.
 */
export function diagramPage(figures: Figure[], scheme: 'light' | 'dark' = 'light'): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Diagrams</title>
<style>
  :root { --fg: #1f2328; --bg: #ffffff; --muted: #59636e; --border: #d1d9e0; --accent: #0969da; color-scheme: ${scheme}; }
  ${scheme === 'dark' ? ':root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --border: #3d444d; --accent: #4493f8; }' : ''}
  body { margin: 0; background: var(--bg); color: var(--fg); font: 16px/1.5 system-ui, sans-serif; }
  main { max-width: 52rem; margin: 0 auto; padding: 1.5rem; }
  figure { margin: 2rem 0; }
  figcaption { color: var(--muted); font-size: 0.9rem; margin-top: 0.5rem; }
</style>
</head>
<body><main>
<h1>Idempotency design: diagrams</h1>
${figures.map(figureHtml).join('\n')}
</main></body>
</html>
`;
}
