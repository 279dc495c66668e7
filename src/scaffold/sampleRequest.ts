import type { ActionView } from './scaffoldView.js';

export const KEY_PLACEHOLDER = '__ID__';

/**
 * A concrete request for an action, for the generated tests: each significant field gets a recognisable value,
 * route parameters go into the URL. `variant` changes the first field that is not part of a derived key, so the
 * same key arrives with a different intent.
 */
export function sampleRequest(action: ActionView, variant = 0): { url: string; body: Record<string, unknown> } {
  const params = new Set([...action.route.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]!));
  const changeable = action.significantFields.find((field) => !(action.keyFrom ?? []).includes(field));
  const body: Record<string, unknown> = {};
  const values: Record<string, string> = {};
  for (const field of action.significantFields) {
    const stem = field.replace(/\[\]/g, '').replace(/\./g, '-');
    // Fields of a derived key carry the placeholder the tests replace, so each test gets its own key.
    const value = (action.keyFrom ?? []).includes(field) ? `${stem}-${KEY_PLACEHOLDER}` : `${stem}-${field === changeable ? 1 + variant : 1}`;
    if (params.has(field)) {
      values[field] = value;
      continue;
    }
    setPath(body, field, value);
  }
  // Derived keys read their fields from the request too; give fields that are not significant a value as well.
  for (const field of action.keyFrom ?? []) {
    if (!action.significantFields.includes(field) && !params.has(field)) setPath(body, field, `${field}-${KEY_PLACEHOLDER}`);
  }
  const url = action.route.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => values[name] ?? `${name}-${KEY_PLACEHOLDER}`);
  return { url, body };
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const [head, ...rest] = path.split('.');
  if (head === undefined) return;
  if (head.endsWith('[]')) {
    const name = head.slice(0, -2);
    const list = (Array.isArray(target[name]) ? target[name] : (target[name] = [{}])) as Record<string, unknown>[];
    if (rest.length === 0) target[name] = [value];
    else setPath(list[0]!, rest.join('.'), value);
    return;
  }
  if (rest.length === 0) {
    target[head] = value;
    return;
  }
  const child = (typeof target[head] === 'object' && target[head] !== null ? target[head] : (target[head] = {})) as Record<string, unknown>;
  setPath(child, rest.join('.'), value);
}
