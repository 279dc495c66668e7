/**
 * Scopes an SVG's <style> rules to its root id. Inline SVG styles are global to the HTML page, so
 * an unscoped `text { … }` from one diagram would restyle every other diagram and the document.
 *
 * Only flat rule lists are expected (that is what the pinned renderer emits); anything else, such
 * as an at-rule, throws so a renderer upgrade cannot silently leak styles.
 */
export function scopeSvgCss(svg: string, rootId: string): string {
  return svg.replace(/<style>([\s\S]*?)<\/style>/g, (_m, css: string) => `<style>${scopeRules(css, rootId)}</style>`);
}

function scopeRules(css: string, rootId: string): string {
  const withoutComments = css.replace(/\/\*[\s\S]*?\*\//g, '');
  if (withoutComments.includes('@')) throw new Error('Bug: unexpected at-rule in diagram CSS; scopeSvgCss handles flat rules only');
  const rules: string[] = [];
  const rule = /([^{}]+)\{([^{}]*)\}/g;
  let consumed = 0;
  for (let m = rule.exec(withoutComments); m !== null; m = rule.exec(withoutComments)) {
    if (withoutComments.slice(consumed, m.index).trim() !== '') throw new Error('Bug: unparsed text in diagram CSS');
    consumed = m.index + m[0].length;
    const selectors = m[1]!.split(',').map((s) => scopeSelector(s.trim(), rootId));
    const body = m[2]!
      .split(';')
      .map((d) => d.trim())
      .filter(Boolean)
      .join('; ');
    rules.push(`${selectors.join(', ')} { ${body}; }`);
  }
  if (withoutComments.slice(consumed).trim() !== '') throw new Error('Bug: unparsed text in diagram CSS');
  return `\n${rules.join('\n')}\n`;
}

function scopeSelector(selector: string, rootId: string): string {
  if (selector === 'svg') return `#${rootId}`;
  if (selector.startsWith('svg ')) return `#${rootId}${selector.slice(3)}`;
  return `#${rootId} ${selector}`;
}
