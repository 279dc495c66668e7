import type { StoreConnection } from '../../inspect/types.js';
import { readInside } from '../../emit/safePath.js';
import { readTemplate } from '../../scaffold/readTemplate.js';
import type { ProjectImports } from '../importStyle.js';
import type { Edit, ManualStep, WiringTarget } from '../types.js';
import { HOOK_FILES, wireClients } from './clientWiring.js';
import { nextPrincipalOf, renderNextInstance, type NextPrincipal } from './nextInstance.js';
import { nextKindOf, wiredIn } from './nextRoute.js';
import { isPagesApiFile } from '../../model/labels.js';
import { projectFile, projectFiles } from '../projectScan.js';

export interface NextProjectInput {
  root: string;
  targets: readonly WiringTarget[];
  /** The changes the route transforms planned so far (their text is the starting point for those files). */
  changes: ReadonlyArray<{ path: string; before?: string; after: string }>;
  scaffoldDir: string;
  imports: ProjectImports;
  scaffoldModules: ReadonlySet<string>;
  keyHeader: string;
  /** apply refuses anyway: the client pass would only add noise. */
  stale: boolean;
  /** The scaffold's store (stores/*.ts id), whose createPool the instance calls. */
  storeId?: string;
  /** How the project connects to that store's database, when its code says (findStoreConnection). */
  connection?: StoreConnection;
  /** The scaffold exports createMemoryStore: the instance puts the app's own tests on it. */
  memory?: boolean;
}

export interface NextProjectPlan {
  changes: Array<{ path: string; before?: string; after: string }>;
  edits: Edit[];
  manual: ManualStep[];
}

/**
 * What a Next.js app needs beyond its route files: the client side (components calling the protected routes and
 * Server Actions, see clientWiring.ts), the hook those use, and the instance module with a principal the user
 * completes. Returns new and further-changed files; a change to a file already planned replaces its `after`.
 */
export async function planNextProject(input: NextProjectInput): Promise<NextProjectPlan> {
  const out: NextProjectPlan = { changes: [], edits: [], manual: [] };
  if (input.targets.length === 0 || input.stale) return out;
  const actions: WiringTarget[] = [];
  const routes: WiringTarget[] = [];
  // A webhook wrapped in onceForEvent has no callers to wire, but its webhookEvent module imports the instance.
  let webhooks = false;
  for (const target of input.targets) {
    const change = input.changes.find((c) => c.path === target.file);
    const text = change?.before ?? (await readInside(input.root, target.file).catch(() => undefined)) ?? '';
    if (target.trigger === 'webhook') {
      webhooks ||= (change?.after ?? text).includes(`onceForEvent(ACTIONS.${target.codeName},`);
      continue;
    }
    // Only what is wrapped changes for its callers: an action left manual keeps its signature and its callers.
    if (!wiredIn(change?.after ?? text, target)) continue;
    (nextKindOf(target.file, text) === 'action' ? actions : routes).push(target);
  }
  if (actions.length === 0 && routes.length === 0) return webhooks ? withInstance(input, out, []) : out;
  const { files } = await projectFiles(input.root);
  const texts: Array<{ path: string; text: string; before: string }> = [];
  for (const file of files) {
    if (!/\.[cm]?[jt]sx?$/.test(file.rel)) continue;
    const before = await projectFile(input.root, file.rel);
    if (before === undefined) continue;
    texts.push({ path: file.rel, before, text: input.changes.find((c) => c.path === file.rel)?.after ?? before });
  }
  const clients = wireClients(texts, { routes, actions }, { scaffoldDir: input.scaffoldDir, imports: input.imports, keyHeader: input.keyHeader });
  for (const [file, after] of clients.texts) out.changes.push({ path: file, before: texts.find((t) => t.path === file)!.before, after });
  out.edits.push(...clients.edits);
  out.manual.push(...clients.manual);
  if (clients.usesHook) {
    for (const name of HOOK_FILES) {
      const file = `${input.scaffoldDir}/${name}.ts`;
      if ((await readInside(input.root, file).catch(() => undefined)) !== undefined) continue;
      out.changes.push({ path: file, after: readTemplate(`typescript/client/${name}.ts`) });
      out.edits.push({ action: input.targets[0]!.action, file, summary: name === 'useIdempotencyKey' ? 'creates the useIdempotencyKey() hook: one key per user intent, reused on retry' : 'creates the intent key logic the hook keeps (no React, testable alone)' });
    }
  }
  return withInstance(input, out, [...routes, ...actions]);
}

/** The instance module every wrapped route, Server Action and webhook imports, written once; scoped actions need its principal filled in. */
async function withInstance(input: NextProjectInput, out: NextProjectPlan, wired: readonly WiringTarget[]): Promise<NextProjectPlan> {
  const scoped = wired.filter((t) => t.scope !== undefined && t.scope !== 'global');
  const instance = `${input.scaffoldDir}/instance.ts`;
  // A Pages API route hands the principal its req and res: the session is read from them there.
  const pages = scoped.some((t) => isPagesApiFile(t.file));
  const auth = scoped.length > 0 && !input.scaffoldModules.has('instance') ? await appAuth(input, pages) : undefined;
  if (!input.scaffoldModules.has('instance')) {
    out.changes.push({ path: instance, after: renderNextInstance(scoped.length > 0, input.storeId, auth, input.memory ?? false, input.connection) });
    out.edits.push({ action: input.targets[0]!.action, file: instance, summary: `creates the app instance: createIdempotency() with the pool and the principal${auth ? ` (the signed-in user's id through ${auth.label})` : ''}` });
  }
  const instanceText = input.scaffoldModules.has('instance') ? await readInside(input.root, instance).catch(() => undefined) : renderNextInstance(scoped.length > 0, input.storeId, auth, input.memory ?? false, input.connection);
  if (auth) {
    // A route handler whose own code never reads the session, in an app whose middleware.ts may let signed-out callers
    // through: its keys are per user, so the principal finds no one there and every such request is refused.
    const handlers = scoped.filter((t) => t.file !== undefined && nextKindOf(t.file, '') !== undefined);
    const { readRouteAuthentication } = await import('../routeAuthentication.js');
    const authenticationOf = handlers.length > 0 ? await readRouteAuthentication(input.root) : undefined;
    for (const target of handlers) {
      const read = authenticationOf?.(target);
      if (read !== undefined && read.by.length > 0) continue;
      const where = read === undefined ? 'and a middleware.ts that may let signed-out callers through runs for it' : 'and no middleware.ts runs for it';
      out.manual.push({ action: target.action, file: target.file, line: target.line, reason: `keys of ${target.action} are scoped per ${target.scope}, but nothing in its handler (nor what it calls) reads the session, ${where}: for a signed-out caller the principal (${auth.label}) finds no one and the route answers 401. If it serves signed-out callers (a sign-up, a token resend), set "scope": "global" for it in the config and run generate` });
    }
  }
  if (scoped.length > 0 && instanceText?.includes('principal: async () => undefined')) {
    for (const target of scoped) {
      out.manual.push({ action: target.action, file: instance, reason: `keys of ${target.action} are scoped per ${target.scope}: make principal in ${instance} return the signed-in id from your session; until then the action is refused (401 / PrincipalMissingError)` });
    }
  }
  return out;
}

/** The app's recognisable auth (nextInstance.ts), read from its own source files. */
async function appAuth(input: NextProjectInput, pages: boolean): Promise<NextPrincipal | undefined> {
  const { files } = await projectFiles(input.root);
  const texts: Array<{ path: string; text: string }> = [];
  for (const file of files) {
    if (!/\.[cm]?[jt]sx?$/.test(file.rel) || file.rel.startsWith(`${input.scaffoldDir}/`)) continue;
    const text = await projectFile(input.root, file.rel);
    if (text !== undefined) texts.push({ path: file.rel, text });
  }
  return nextPrincipalOf(texts, input.scaffoldDir, input.imports.defaultExtension, pages);
}
