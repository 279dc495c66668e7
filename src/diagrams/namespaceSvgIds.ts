/**
 * Prefixes every id inside an SVG, and every reference to one, with the figure id. Two diagrams on
 * one page otherwise both define `#arrowhead`, and the browser resolves every `url(#arrowhead)` to
 * the first, so a hidden or restyled diagram breaks its neighbours.
 */
export function namespaceSvgIds(svg: string, prefix: string): string {
  const ids = new Set<string>();
  for (const m of svg.matchAll(/\sid="([^"]+)"/g)) {
    if (ids.has(m[1]!)) throw new Error(`Bug: the diagram renderer emitted id "${m[1]}" twice`);
    ids.add(m[1]!);
  }
  const rename = (id: string) => (ids.has(id) && !id.startsWith(`${prefix}-`) ? `${prefix}-${id}` : id);
  return svg
    .replace(/(\sid=")([^"]+)(")/g, (_m, a: string, id: string, b: string) => `${a}${rename(id)}${b}`)
    .replace(/url\(#([^)]+)\)/g, (_m, id: string) => `url(#${rename(id)})`)
    .replace(/(\s(?:xlink:)?href=")#([^"]+)(")/g, (_m, a: string, id: string, b: string) => `${a}#${rename(id)}${b}`);
}
