/** Anchor/file-safe slug: "createPayment" → "create-payment"; unsafe input still yields something usable. */
export function slugify(text: string): string {
  const slug = text
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug === '' ? 'action' : slug.slice(0, 60);
}

/** A valid camelCase JavaScript identifier derived from any name. */
export function toCodeName(text: string): string {
  const words = text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  if (words.length === 0) return 'action';
  const joined = words
    .map((word, index) => (index === 0 ? word.charAt(0).toLowerCase() + word.slice(1) : word.charAt(0).toUpperCase() + word.slice(1)))
    .join('');
  return /^[0-9]/.test(joined) ? `action${joined}` : joined;
}

/** Makes slugs unique by suffixing -2, -3 … in order of appearance. */
export function uniqueSlugs(names: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((name) => {
    const base = slugify(name);
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    return count === 1 ? base : `${base}-${count}`;
  });
}

/** Splits "POST /payments/:id" into method and path; undefined when the route is not an HTTP route. */
export function parseHttpRoute(route: string | undefined): { method: string; path: string } | undefined {
  if (!route) return undefined;
  const match = /^(GET|POST|PUT|PATCH|DELETE|ALL)\s+(\/\S*)$/i.exec(route.trim());
  if (!match) return undefined;
  return { method: match[1]!.toUpperCase(), path: match[2]! };
}
