import { projectFile, projectFiles } from './projectScan.js';

const ID_NAMES = '(id|userId|sub|accountId|tenantId|uid)';
const NOT_CALLER = new Set(['params', 'body', 'query', 'headers', 'cookies', 'files', 'file', 'session', 'app', 'socket', 'raw', 'log', 'user']);

/**
 * Where the project's own authentication puts the caller when it is not `request.user` (the generated principal's
 * convention): a property the code assigns on the request (`req.usuario = decoded` in a JWT middleware) and reads an
 * id from elsewhere (`req.usuario.id`). The most read such path, or undefined when none or when the project also
 * sets `request.user` (the convention then holds).
 */
export function assignedPrincipal(texts: readonly string[]): string[] | undefined {
  const assigned = new Set<string>();
  const reads = new Map<string, number>();
  for (const text of texts) {
    for (const m of text.matchAll(/\b(?:req|request)\.(\w+)\s*=[^=]/g)) if (!NOT_CALLER.has(m[1]!)) assigned.add(m[1]!);
    for (const m of text.matchAll(new RegExp(`\\b(?:req|request)\\.(\\w+)\\??\\.${ID_NAMES}\\b`, 'g'))) {
      if (!NOT_CALLER.has(m[1]!)) reads.set(`${m[1]!}.${m[2]!}`, (reads.get(`${m[1]!}.${m[2]!}`) ?? 0) + 1);
    }
  }
  const ranked = [...reads].filter(([path]) => assigned.has(path.split('.')[0]!)).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return ranked[0]?.[0].split('.');
}

/**
 * Whether the project's code puts the caller on `request.user`: an assignment (`req.user = …`, `request['user'] = …`,
 * `request[REQUEST_USER_KEY] = …` with `const REQUEST_USER_KEY = 'user'` somewhere), or a `user` declared on the
 * framework's request type.
 */
export function assignsRequestUser(texts: readonly string[]): boolean {
  const userKeys = new Set(texts.flatMap((text) => [...text.matchAll(/\bconst\s+([A-Za-z_$][\w$]*)\s*=\s*['"]user['"]/g)].map((m) => m[1]!)));
  const byKey = (text: string) => [...text.matchAll(/\b(?:req|request)\[\s*(?:['"]user['"]|([A-Za-z_$][\w$]*))\s*\]\s*=[^=]/g)].some((m) => m[1] === undefined || userKeys.has(m[1]));
  return texts.some((text) => /\b(req|request)\.user\s*=[^=]/.test(text) || /interface\s+(FastifyRequest|Request)\b[^}]*\buser\??\s*:/.test(text) || byKey(text));
}

/** The project's source texts, for assignedPrincipal. */
export async function projectTexts(root: string): Promise<string[]> {
  const { files } = await projectFiles(root);
  const texts = await Promise.all(files.filter((f) => /\.(m|c)?[jt]sx?$/.test(f.rel)).map((f) => projectFile(root, f.rel)));
  return texts.filter((t): t is string => t !== undefined);
}

/**
 * A Shopify app on @shopify/shopify-app-express: `shopify.validateAuthenticatedSession()` leaves the shop's session in
 * `res.locals.shopify.session`, and the shop (its myshopify.com domain) is the caller keys are scoped to. Express hands
 * the response to the principal as `req.res`.
 */
export function shopifyPrincipal(texts: readonly string[]): string[] | undefined {
  const express = texts.some((text) => /['"]@shopify\/shopify-app-express['"]/.test(text));
  return express && texts.some((text) => /\.validateAuthenticatedSession\s*\(/.test(text)) ? ['res', 'locals', 'shopify', 'session', 'shop'] : undefined;
}
