import path from 'node:path';
import { Node, type CallExpression, type SourceFile } from 'ts-morph';
import { readInside } from '../emit/safePath.js';
import { findByNamePath, followReference, insideProject, loadProject, namePath, usesOf } from './followHandler.js';
import { importStyleFor, type ProjectImports } from './importStyle.js';
import { OPENAPI_ROUTE, samePath } from './locateRoute.js';
import { locateOpenApi, openApiCalls } from './openApiConfig.js';
import { findConfig, followedConfig, nameOf, referenceOf, resolveConfig, type ConfigPlace } from './resolveOpenApiConfig.js';
import { bindsName, ensureNamedImport, parseSource } from './sourceFile.js';
import { clientKeyStep } from './transforms/context.js';
import { honoPrincipal } from './transforms/honoRoute.js';
import { READS_NO_PRINCIPAL } from './transforms/koaRoute.js';
import { addRouteMiddleware, hasRouteMiddleware } from './transforms/openApiMiddleware.js';
import { keyStripeCalls } from './transforms/stripeKey.js';
import type { Edit, ManualStep, WiringTarget } from './types.js';
import { projectFiles } from './projectScan.js';

export interface OpenApiInput {
  root: string;
  /** The Hono HTTP targets, and the steps the route pass left (its @hono/zod-openapi step names the ones to wire here). */
  targets: readonly WiringTarget[];
  manual: readonly ManualStep[];
  /** Each target file as read and as the route pass left it. */
  texts: ReadonlyMap<string, { before: string; after: string }>;
  anyLine: (file: string) => boolean;
  scaffoldDir: string;
  imports: ProjectImports;
  scaffoldModules: ReadonlySet<string>;
}

export interface OpenApiOutcome {
  /** Files whose text changed, with their new text. */
  texts: Map<string, string>;
  edits: Edit[];
  manual: ManualStep[];
  /** Actions this pass decided (wired, or left with its own more exact step): the route pass's step goes. */
  decided: Set<string>;
  /** Registrations no longer where the inspection recorded them: apply refuses to guess. */
  stale: string[];
  /** Actions whose config lists the middleware after this pass. */
  wired: Set<string>;
  /** How the registered handler reads the caller's id, per action (the instance's principal). */
  principals: Map<string, string[]>;
}

interface Resolved {
  target: WiringTarget;
  place: ConfigPlace;
  /** `routes.create`, or 'its inline config', for messages. */
  label: string;
  /** `middleware: common` names a list declared in the project (`const common = [auth, audit]`). */
  namesList: boolean;
  /** The registration's line, its place among the file's `.openapi` calls, and how its handler reads the caller's id. */
  line: number;
  index: number;
  principal: string[] | undefined;
  /** A handler passed by name, where it is declared (or why it is not followed into). */
  named?: { file: string; names: string[]; reference: string; others: string[] };
}

const route = (target: WiringTarget) => `${target.method ?? 'POST'} ${target.path ?? ''}`;

/**
 * @hono/zod-openapi routes (`app.openapi(routes.create, handlers.create)`): the route config takes the middleware,
 * so it gets `middleware: [..., idempotency.<action>]` where it is declared: inline in the call, or the
 * `createRoute({ … })` a name leads to, in the same file or a project file it imports (named, namespace and default
 * imports, path aliases, re-exports). OpenAPIHono runs a config's middleware before its validators, and the
 * generated middleware reads the body from a clone, so the validator (and the handler's `c.req.valid('json')`) still
 * read it. A config any other code uses (a second `.openapi`, a spread into another config, a registry) is left
 * to the user: the middleware would run there too.
 */
export async function wireOpenApiRoutes(input: OpenApiInput): Promise<OpenApiOutcome> {
  const out: OpenApiOutcome = { texts: new Map(), edits: [], manual: [], stale: [], decided: new Set(), wired: new Set(), principals: new Map() };
  const candidates = input.targets.filter((t) => t.trigger === 'http' && input.texts.has(t.file) && input.manual.some((m) => m.action === t.action && m.reason.includes(OPENAPI_ROUTE)));
  if (candidates.length === 0) return out;
  const { files } = await projectFiles(input.root);
  const project = loadProject(input.root, files.map((f) => f.rel));
  const resolved: Resolved[] = [];
  for (const target of candidates) {
    const sf = project.getSourceFile(path.join(input.root, target.file));
    if (!sf) continue;
    out.decided.add(target.action);
    const call = locateOpenApi(sf, target, input.anyLine(target.file), samePath, (candidate) => followedConfig(input.root, candidate));
    if (!call) {
      out.stale.push(`${target.file} changed since inspection: no ${route(target)} registration found (expected at line ${target.line})`);
      continue;
    }
    const line = call.getExpression().getEndLineNumber();
    const leave = (why: string) => out.manual.push({ action: target.action, file: target.file, line, reason: `${route(target)} ${OPENAPI_ROUTE}: ${why}; add \`middleware: [idempotency.${target.codeName}]\` to its route config by hand` });
    const found = resolveConfig(input.root, target.file, sf, call);
    if ('why' in found) {
      leave(found.why);
      continue;
    }
    resolved.push({ target, ...found, line, index: openApiCalls(sf).indexOf(call), principal: handlerPrincipal(input.root, call), ...namedHandler(input.root, sf, call) });
  }

  // What a wired route needs besides (as the route pass says for `app.post(…)`): who the caller is, the client's key.
  const wired = ({ target, line, principal }: Resolved) => {
    out.wired.add(target.action);
    if (principal) out.principals.set(target.action, principal);
    else if (target.scope !== undefined && target.scope !== 'global') {
      out.manual.push({ action: target.action, file: target.file, line, reason: `${READS_NO_PRINCIPAL}, but the action's keys are scoped per ${target.scope}: check that the principal in the instance module (c.get('user')?.id) is what your authentication sets, or set "scope": "global" for it in the config` });
    }
    out.manual.push(...clientKeyStep(target));
  };
  for (const item of resolved) {
    const { target, place } = item;
    const current = out.texts.get(place.file) ?? input.texts.get(place.file)?.after ?? (await readInside(input.root, place.file));
    if (current === undefined) continue;
    const style = importStyleFor(place.file, current, input.scaffoldDir, input.imports);
    const sf = parseSource(place.file, current, style);
    const object = findConfig(sf, place);
    if (!object) {
      out.manual.push({ action: target.action, file: place.file, reason: `${route(target)}: apply cannot find the route config ${item.label} in ${place.file} again; add \`middleware: [idempotency.${target.codeName}]\` to it by hand` });
      continue;
    }
    if (hasRouteMiddleware(object, target.codeName)) {
      wired(item);
      continue;
    }
    const specifier = style.specifier('instance');
    const imported = sf.getImportDeclarations().some((d) => d.getModuleSpecifierValue() === specifier && d.getNamedImports().some((n) => (n.getAliasNode()?.getText() ?? n.getName()) === 'idempotency'));
    if (!imported && bindsName(sf, 'idempotency')) {
      out.manual.push({ action: target.action, file: place.file, line: object.getStartLineNumber(), reason: `${route(target)}: ${place.file} already has its own binding named "idempotency"; add \`middleware: [idempotency.${target.codeName}]\` to the route config ${item.label} by hand, importing it from the instance module` });
      continue;
    }
    const edit = addRouteMiddleware(object, { codeName: target.codeName, typed: /\.(c|m)?tsx?$/.test(place.file), quote: style.quote, namesList: () => item.namesList });
    if (edit.kind === 'manual') {
      out.manual.push({ action: target.action, file: place.file, line: object.getStartLineNumber(), reason: `${route(target)}: ${edit.reason}; add idempotency.${target.codeName} to the route config ${item.label} by hand` });
      continue;
    }
    wired(item);
    if (edit.kind === 'edited') {
      ensureNamedImport(sf, specifier, 'idempotency');
      out.texts.set(place.file, sf.getFullText());
      const line = findConfig(sf, place)?.getStartLineNumber();
      out.edits.push({ action: target.action, file: place.file, summary: `adds idempotency.${target.codeName} to the middleware of ${route(target)}'s route config ${item.label} (${place.file}${line ? `:${line}` : ''}), which @hono/zod-openapi runs before its validators` });
    }
  }
  // The handlers of wired routes: their provider calls keyed from the claim, as an inline `app.post` handler's are.
  for (const item of resolved.filter((r) => out.wired.has(r.target.action))) await keyHandler(input, out, item);
  return out;
}

/** The wired route's handler (inline, or where its name leads) gets its provider calls keyed from `idempotencyOf(c)`. */
async function keyHandler(input: OpenApiInput, out: OpenApiOutcome, item: Resolved): Promise<void> {
  const { target, named } = item;
  if (named && named.others.length > 0) {
    if (target.provider !== undefined) out.manual.push({ action: target.action, file: named.file, reason: `the handler ${named.reference} is also used at ${named.others.join(', ')}: keyed from this route's claim it would fail (or send this action's key) there. Give each route its own handler, or pass idempotencyOf(c) into a shared function and add stripeRequestOptions(context) to its provider calls by hand` });
    return;
  }
  const file = named?.file ?? target.file;
  const current = out.texts.get(file) ?? input.texts.get(file)?.after ?? (await readInside(input.root, file));
  if (current === undefined) return;
  const style = importStyleFor(file, current, input.scaffoldDir, input.imports);
  const sf = parseSource(file, current, style);
  const inline = named ? undefined : openApiCalls(sf)[item.index]?.getArguments()[1];
  const handler = named ? findByNamePath(sf, named.names) : inline && (Node.isArrowFunction(inline) || Node.isFunctionExpression(inline)) ? inline : undefined;
  if (!handler) return;
  const keyed = keyStripeCalls(sf, handler, { ...target, file, line: handler.getStartLineNumber() }, { style, anyLine: true, scaffoldModules: input.scaffoldModules });
  out.manual.push(...keyed.manual);
  if (keyed.edits.length === 0) return;
  if (named) out.edits.push({ action: target.action, file, summary: `follows the handler ${named.reference} of ${route(target)} to ${file}: its provider calls read the claim from the handler's own context parameter` });
  out.edits.push(...keyed.edits);
  out.texts.set(file, sf.getFullText());
}

/** A handler the registration passes by name: where it is declared, and every other place that uses it. */
function namedHandler(root: string, sf: SourceFile, call: CallExpression): { named?: Resolved['named'] } {
  const handler = call.getArguments()[1];
  const reference = handler && referenceOf(handler);
  const followed = reference ? followReference(root, reference) : undefined;
  if (!handler || !reference || followed?.kind !== 'function') return {};
  const uses = usesOf(followed.definition, followed.links) ?? [];
  const others = uses
    .filter((node) => !(node.getSourceFile() === sf && node.getStart() === reference.getStart()) && !node.getFirstAncestor((a) => Node.isTypeNode(a)))
    .map((node) => `${insideProject(root, node.getSourceFile().getFilePath()) ?? node.getSourceFile().getBaseName()}:${node.getStartLineNumber()}`);
  return { named: { file: followed.file, names: namePath(followed.fn), reference: nameOf(handler), others } };
}

/** How the registered handler (inline, or followed by name to its declaration) reads the caller's id. */
function handlerPrincipal(root: string, call: CallExpression): string[] | undefined {
  const handler = call.getArguments()[1];
  if (!handler) return undefined;
  if (Node.isArrowFunction(handler) || Node.isFunctionExpression(handler)) return honoPrincipal(handler);
  const reference = referenceOf(handler);
  const followed = reference ? followReference(root, reference) : undefined;
  return followed?.kind === 'function' ? honoPrincipal(followed.fn) : undefined;
}
