/**
 * Browser code is never a finding: a component posting to `/api/orders` is the client of an endpoint, not one.
 * Decided from the path and cheap text tests, before parsing.
 */
const UI_IMPORT = /(?:from\s*|require\(\s*|import\(\s*)['"](react|react-dom(\/[\w-]+)?|vue|svelte(\/[\w-]+)?|solid-js|preact|@angular\/core|next\/(link|router|image|head|dynamic)|@remix-run\/react|react-native|@tanstack\/react-query|swr|axios-hooks)['"]/;
/**
 * next/navigation serves both sides: `redirect` and `notFound` are called in server code (a Server Action's helper, a
 * route handler), its hooks only in components.
 */
const NEXT_NAVIGATION_HOOK = /import\s*\{[^}]*\buse[A-Z]\w*[^}]*\}\s*from\s*['"]next\/navigation['"]/;
const USE_CLIENT = /^\s*(?:\/\/[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*['"]use client['"]/;
/** A relative fetch only works in a browser, where it resolves against the page's origin. */
const RELATIVE_FETCH = /\b(?:fetch|axios(?:\.(?:get|post|put|patch|delete))?|ky(?:\.\w+)?|\$fetch|useFetch)\(\s*[`'"]\/(?!\/)/;
const BROWSER_GLOBALS = /\b(?:window\.(?:location|addEventListener|localStorage)|document\.(?:getElementById|querySelector|createElement|addEventListener|cookie)|localStorage\.(?:getItem|setItem))\b/;

const FRONTEND_PATH = [
  /(^|\/)(components|composables|layouts|widgets|ui|frontend|webapp)\//,
  // Next.js app router UI files; route.ts beside them is server code.
  /(^|\/)app\/(.*\/)?(page|layout|loading|error|not-found|template|default|global-error)\.[cm]?[jt]sx?$/,
];

/** `usesNext`: the package depends on Next.js, so `pages/` is the pages router (only `pages/api` is server code). */
export function isFrontEndPath(rel: string, usesNext: boolean): boolean {
  if (FRONTEND_PATH.some((re) => re.test(rel))) return true;
  return usesNext && /(^|\/)pages\//.test(rel) && !/(^|\/)pages\/api(\/|\.)/.test(rel);
}

/** The five tests as one expression (same flags, none), so a file is scanned once rather than five times. */
const FRONT_END_SOURCE = new RegExp([UI_IMPORT, NEXT_NAVIGATION_HOOK, USE_CLIENT, RELATIVE_FETCH, BROWSER_GLOBALS].map((re) => `(?:${re.source})`).join('|'));

/** Block and line comments (a `//` inside a string cuts it short: only used to re-test a match, never to parse). */
const COMMENTS = /\/\*[\s\S]*?\*\/|(?<![:'"`\w])\/\/[^\n]*/g;

export function isFrontEndSource(text: string): boolean {
  if (!FRONT_END_SOURCE.test(text)) return false;
  // Only code counts: a server file's comment about what the browser does (`window.location.href = …`) is no browser code.
  return USE_CLIENT.test(text) || FRONT_END_SOURCE.test(text.replace(COMMENTS, ''));
}
