import { Node, SyntaxKind, type ArrowFunction, type CallExpression, type FunctionDeclaration, type FunctionExpression, type SourceFile } from 'ts-morph';
import type { Config } from '../config/schema.js';
import { readInside } from '../emit/safePath.js';
import { lineMapping } from '../emit/unifiedDiff.js';
import type { ActionCodeFacts } from '../model/codeFacts.js';
import type { DesignModel } from '../model/types.js';
import type { ProjectImports } from './importStyle.js';
import { importStyleFor } from './importStyle.js';
import { ensureNamedImport, fitStatement, parseSource } from './sourceFile.js';
import { lineIndent } from './transforms/consumer.js';
import { wiredInController } from './transforms/routingControllersMethod.js';
import type { Edit, ManualStep, WiringTarget } from './types.js';

/**
 * Moving a handler's own SQL writes onto the claim's transaction (the DBOS property: the key and the business writes
 * commit together). Only the narrow case where it is provably right: an Express, Fastify, Koa or Hono handler on a
 * PostgreSQL (pg) or MySQL (mysql2/promise) store whose every recorded write is a direct `pool.query(…)` /
 * `pool.execute(…)` in the handler itself, on a pool the project creates from the store's driver, with no transaction
 * of its own and no configured mode. Then the handler reads `const db = transactionOf(idempotencyOf(req)) ?? pool;`
 * (its own first parameter: `request`, `ctx`, `c`) and runs its statements on `db`, and the config sets
 * "mode": "transactional" for the action.
 */

/** The scaffold module apply writes once with the typed accessor (like webhookEvent.ts). */
export const CLAIM_TRANSACTION_MODULE = 'claimTransaction';

/** What the apply summary and record call this edit. */
export const MOVED_WRITES = "writes moved onto the claim's transaction";

type Handler = ArrowFunction | FunctionExpression | FunctionDeclaration;

/**
 * The frameworks whose generated adapter hands a route handler its claim through its first parameter
 * (`idempotencyOf(req)`, `idempotencyOf(request)`, `idempotencyOf(ctx)`, `idempotencyOf(c)`), and the name each one's
 * documentation gives that parameter, for the steps that tell the user what to pass down.
 */
const REQUEST_PARAMETER = { express: 'req', fastify: 'request', koa: 'ctx', hono: 'c' } as const;
type ClaimFramework = keyof typeof REQUEST_PARAMETER;
const isClaimFramework = (framework: string | undefined): framework is ClaimFramework => framework !== undefined && Object.hasOwn(REQUEST_PARAMETER, framework);

const DRIVERS = { postgres: { modules: ['pg'], client: 'PoolClient', methods: ['query'] }, mysql: { modules: ['mysql2/promise'], client: 'PoolConnection', methods: ['query', 'execute'] } } as const;
type StoreId = keyof typeof DRIVERS;

/** A handler's own transaction: SQL BEGIN / START TRANSACTION, a checked-out client or connection, an ORM transaction. */
const OWN_TRANSACTION = /\bBEGIN\b|\bSTART\s+TRANSACTION\b|\.connect\s*\(|\bgetConnection\s*\(|\.transaction\s*\(|\.beginTransaction\s*\(/i;

/** The accessor module, rendered as TypeScript (planApply transpiles it for a JavaScript scaffold). */
export function renderClaimTransaction(store: StoreId): string {
  const driver = DRIVERS[store];
  return `import type { ${driver.client} } from '${driver.modules[0]}';
import type { IdempotencyContext } from './types.js';

// Written once by \`idempotency-builder apply\`; yours to edit.

/**
 * The claim's open transaction (the ${driver.client} the store gave the handler in transactional mode), or undefined in
 * lease mode and outside a protected route. A handler that runs its statements on it, falling back to its own pool
 * when it gives undefined, writes in the claim's transaction when there is one, so they commit or roll back with the key.
 */
export function transactionOf(context: IdempotencyContext | undefined): ${driver.client} | undefined {
  return context?.db as ${driver.client} | undefined;
}
`;
}

/**
 * Actions apply may move: no configured mode, no provider or saga step, an HTTP route of a framework whose adapter
 * exposes the claim to the handler (Express, Fastify, Koa, Hono), on a pg or mysql2 store.
 */
export function claimWriteCandidates(model: DesignModel, config: Config, framework: string | undefined, targets: readonly WiringTarget[]): WiringTarget[] {
  if (!isClaimFramework(framework) || !(model.stack.storeDatabase in DRIVERS)) return [];
  return targets.filter((target) => {
    const action = config.actions.find((a) => a.name === target.action);
    return action !== undefined && target.trigger === 'http' && action.mode === undefined && action.provider === undefined && (action.steps ?? []).length === 0;
  });
}

export interface ClaimWritesResult {
  /** File → its text with the writes moved. */
  texts: Map<string, string>;
  edits: Edit[];
  manual: ManualStep[];
  /** Actions whose writes now run on the claim's transaction: the config sets "mode": "transactional" for each. */
  transactional: string[];
}

export interface ClaimWritesInput {
  root: string;
  /** The app's framework (claimWriteCandidates gave candidates only for one whose adapter exposes the claim). */
  framework: string;
  store: string;
  candidates: readonly WiringTarget[];
  /** Code facts as read from the files on disk (before this run's edits). */
  facts: readonly ActionCodeFacts[];
  /** Text of each file as the earlier passes left it. */
  current: ReadonlyMap<string, string>;
  scaffoldDir: string;
  imports: ProjectImports;
}

export async function moveWritesOntoClaim(input: ClaimWritesInput): Promise<ClaimWritesResult> {
  const out: ClaimWritesResult = { texts: new Map(), edits: [], manual: [], transactional: [] };
  const store = input.store as StoreId;
  const requestParameter = isClaimFramework(input.framework) ? REQUEST_PARAMETER[input.framework] : 'req';
  for (const target of input.candidates) {
    const facts = input.facts.find((f) => f.action === target.action);
    // Nothing the code facts record is written by the project itself, or the code was not followed: nothing to move.
    if (!facts || facts.writes.length === 0 || facts.calls.length > 0) continue;
    const file = facts.handler.file;
    const before = (await readInside(input.root, file).catch(() => undefined)) ?? '';
    const text = out.texts.get(file) ?? input.current.get(file) ?? before;
    const move = lineMapping(before, text);
    const style = importStyleFor(file, text, input.scaffoldDir, input.imports);
    const sf = parseSource(file, text, style);
    const handler = handlerAt(sf, move(facts.handler.line));
    const step = (reason: string, line = facts.handler.line) => out.manual.push({ action: target.action, file, line: move(line), reason: `its writes stay on the project's own connection, so it runs in lease mode: ${reason}` });
    if (wiredInController(sf, target.codeName)) {
      step("a routing-controllers method claims its key inside itself, and apply does not move its writes into the claim's callback: to commit them with the claim, write through transactionOf(context) with the context runOnceInController passes the callback, then set \"mode\": \"transactional\"");
      continue;
    }
    if (!handler) {
      step('apply cannot find its handler function to edit');
      continue;
    }
    const body = handler.getBody();
    if (!body || !Node.isBlock(body)) {
      step('the handler has no block body to hold the transaction binding');
      continue;
    }
    const handlerText = handler.getText();
    if (/\btransactionOf\s*\(/.test(handlerText) || /idempotencyOf\s*\([^()]*\)\s*[!?]?\s*\.\s*db\b/.test(handlerText)) continue;
    const outside = facts.writes.find((w) => w.file !== file || move(w.line) < handler.getStartLineNumber() || move(w.line) > handler.getEndLineNumber());
    if (outside) {
      step(`the write to ${outside.target} at ${outside.file}:${outside.line} is made outside the handler function (in code it calls); pass transactionOf(idempotencyOf(${requestParameter})) down to it by hand, then set "mode": "transactional"`);
      continue;
    }
    if (OWN_TRANSACTION.test(handlerText)) {
      step('the handler opens a transaction or checks out a connection of its own; nesting it in the claim\'s transaction needs judgement');
      continue;
    }
    const request = handler.getParameters()[0]?.getNameNode();
    if (!request || !Node.isIdentifier(request)) {
      step('the handler has no named request parameter to read its claim from');
      continue;
    }
    // Each recorded write must be a direct call on one pool the project creates from the store's driver.
    const calls = handler.getDescendantsOfKind(SyntaxKind.CallExpression);
    const receivers = new Set<string>();
    let refused: string | undefined;
    for (const write of facts.writes) {
      const line = move(write.line);
      const call = calls.find((c) => c.getStartLineNumber() === line && poolCall(c, DRIVERS[store].methods) !== undefined);
      if (!call) {
        refused = `the write to ${write.target} at ${file}:${write.line} is not a direct ${DRIVERS[store].methods.map((m) => `pool.${m}(…)`).join(' or ')} call`;
        break;
      }
      receivers.add(poolCall(call, DRIVERS[store].methods)!);
    }
    const pool = receivers.size === 1 ? [...receivers][0]! : undefined;
    if (refused || !pool) {
      step(refused ?? 'its writes go through more than one client');
      continue;
    }
    if (!(await isProjectPool(input.root, sf, file, pool, store))) {
      step(`${pool} is not a pool this project creates with ${DRIVERS[store].modules.join(' / ')} (new Pool / createPool) at module level`);
      continue;
    }
    // Every use of the pool in the handler is a statement apply moves: a pool handed to other code would keep writing
    // outside the transaction, and one in a catch or finally block would run on a transaction that is failing (its
    // error log rolled back with the claim).
    const uses = handler.getDescendantsOfKind(SyntaxKind.Identifier).filter((id) => {
      const parent = id.getParent();
      // `x.pool` names a property, not the binding.
      return id.getText() === pool && !(Node.isPropertyAccessExpression(parent) && parent.getNameNode() === id);
    });
    const stray = uses.find((id) => {
      const access = id.getParent();
      const call = access?.getParent();
      return !(Node.isPropertyAccessExpression(access) && access.getExpression() === id && Node.isCallExpression(call) && call.getExpression() === access && poolCall(call, DRIVERS[store].methods) === pool);
    });
    if (stray) {
      step(`${pool} is used in the handler at line ${stray.getStartLineNumber()} other than as ${DRIVERS[store].methods.map((m) => `${pool}.${m}(…)`).join(' or ')}; apply moves only direct statements`);
      continue;
    }
    const inFinally = (node: Node) => {
      const parent = node.getParent();
      return Node.isTryStatement(parent) && parent.getFinallyBlock() === node;
    };
    const within = (id: Node) => id.getAncestors().slice(0, id.getAncestors().indexOf(handler));
    const recovering = uses.find((id) => within(id).some((a) => Node.isCatchClause(a) || inFinally(a)));
    if (recovering) {
      step(`the statement on ${pool} at line ${recovering.getStartLineNumber()} runs in a catch or finally block; on the claim's transaction it would roll back with the failure it records`);
      continue;
    }
    const name = ['db', 'claimDb', 'transactionOrPool'].find((n) => n !== pool && !bindsAnywhere(sf, n));
    if (!name) {
      step('the names apply would bind (db, claimDb, transactionOrPool) are all taken in the file');
      continue;
    }
    if (!ensureNamedImport(sf, style.specifier('index'), 'idempotencyOf') || !ensureNamedImport(sf, style.specifier(CLAIM_TRANSACTION_MODULE), 'transactionOf')) {
      step('the file already binds idempotencyOf or transactionOf to something else');
      continue;
    }
    // Every statement on the pool in the handler moves, reads too: a read must see the transaction's own writes.
    const moved = handler.getDescendantsOfKind(SyntaxKind.CallExpression).filter((c) => poolCall(c, DRIVERS[store].methods) === pool);
    for (const call of moved) {
      const callee = call.getExpression();
      if (Node.isPropertyAccessExpression(callee)) callee.getExpression().replaceWithText(name);
    }
    // Read before the raw insertion below, which forgets the file's wrapped nodes.
    const requestName = request.getText();
    const handlerLine = handler.getStartLineNumber();
    // `||` in JavaScript, which older runtimes and Babel 6 (Jest 23) parse; the accessor gives a client or undefined.
    const either = /\.(m|c)?jsx?$/.test(file) ? '||' : '??';
    const statement = fitStatement(sf, `const ${name} = transactionOf(idempotencyOf(${requestName})) ${either} ${pool};`);
    const first = body.getStatements()[0];
    if (first) sf.insertText(first.getStart(), `${statement}\n${lineIndent(first)}`);
    else body.insertStatements(0, statement);
    out.texts.set(file, sf.getFullText());
    out.transactional.push(target.action);
    out.edits.push({ action: target.action, file, summary: `${MOVED_WRITES}: ${moved.length} statement${moved.length === 1 ? '' : 's'} on ${pool} in the handler now run on ${name} (transactionOf(idempotencyOf(${requestName})) ${either} ${pool}), and the config sets "mode": "transactional"` });
    out.manual.push({ action: target.action, file, line: handlerLine, reason: `run \`idempotency-builder generate\` after this apply: the scaffold runs ${target.action} in transactional mode only once regenerated from the config (until then its statements run on ${pool}, as before)` });
  }
  return out;
}

/** The outermost function starting on `line` (the handler the facts name). */
function handlerAt(sf: SourceFile, line: number): Handler | undefined {
  let found: Handler | undefined;
  let route: Handler | undefined;
  sf.forEachDescendant((node, traversal) => {
    if ((Node.isArrowFunction(node) || Node.isFunctionExpression(node) || Node.isFunctionDeclaration(node)) && node.getStartLineNumber() === line) {
      found = node;
      traversal.stop();
    } else if (route === undefined && Node.isCallExpression(node) && node.getStartLineNumber() === line) {
      // The route call's line (`fastify.post(` over an options object, the handler further down): its last argument.
      const last = node.getArguments().at(-1);
      if (last && (Node.isArrowFunction(last) || Node.isFunctionExpression(last))) route = last;
    }
  });
  return found ?? route;
}

/** `pool.query(…)` → 'pool' when the method is one of `methods` and the receiver a bare identifier. */
function poolCall(call: CallExpression, methods: readonly string[]): string | undefined {
  const callee = call.getExpression();
  if (!Node.isPropertyAccessExpression(callee) || !methods.includes(callee.getName())) return undefined;
  const receiver = callee.getExpression();
  return Node.isIdentifier(receiver) ? receiver.getText() : undefined;
}

function bindsAnywhere(sf: SourceFile, name: string): boolean {
  return sf.getDescendantsOfKind(SyntaxKind.Identifier).some((id) => id.getText() === name);
}

/**
 * `name` is a module-level `new Pool(…)` / `new pg.Pool(…)` / `createPool(…)` of the store's driver, in this file or in
 * the project file a relative named import points at.
 */
async function isProjectPool(root: string, sf: SourceFile, file: string, name: string, store: StoreId): Promise<boolean> {
  if (declaresPool(sf, name, store)) return true;
  for (const declaration of sf.getImportDeclarations()) {
    const specifier = declaration.getModuleSpecifierValue();
    if (!specifier.startsWith('.') || declaration.isTypeOnly()) continue;
    const imported = declaration.getNamedImports().find((n) => (n.getAliasNode()?.getText() ?? n.getName()) === name);
    if (!imported) continue;
    const base = [...file.split('/').slice(0, -1), ...specifier.split('/')].reduce<string[]>((parts, part) => (part === '..' ? parts.slice(0, -1) : part === '.' ? parts : [...parts, part]), []).join('/');
    const stem = base.replace(/\.(m|c)?(j|t)s$/, '');
    for (const candidate of [`${stem}.ts`, `${stem}.mts`, `${stem}.js`, `${stem}.mjs`, `${stem}/index.ts`, `${stem}/index.js`]) {
      const text = await readInside(root, candidate).catch(() => undefined);
      if (text === undefined) continue;
      const other = parseSource(candidate, text, { quote: 'single', semicolons: true });
      return declaresPool(other, imported.getName(), store, true);
    }
  }
  return false;
}

function declaresPool(sf: SourceFile, name: string, store: StoreId, exported = false): boolean {
  const driver = DRIVERS[store];
  const locals = new Set<string>();
  for (const declaration of sf.getImportDeclarations()) {
    if (!(driver.modules as readonly string[]).includes(declaration.getModuleSpecifierValue())) continue;
    const local = declaration.getDefaultImport()?.getText() ?? declaration.getNamespaceImport()?.getText();
    if (local) locals.add(local);
    for (const named of declaration.getNamedImports()) locals.add(named.getAliasNode()?.getText() ?? named.getName());
  }
  const statement = sf.getVariableStatements().find((s) => s.getDeclarations().some((d) => d.getName() === name));
  if (!statement || (exported && !statement.isExported())) return false;
  const init = statement.getDeclarations().find((d) => d.getName() === name)?.getInitializer();
  if (!init) return false;
  // new Pool(…), new pg.Pool(…) for pg; createPool(…), mysql.createPool(…) for mysql2/promise.
  const callee = Node.isNewExpression(init) && store === 'postgres' ? init.getExpression() : Node.isCallExpression(init) && store === 'mysql' ? init.getExpression() : undefined;
  if (!callee) return false;
  const wanted = store === 'postgres' ? 'Pool' : 'createPool';
  if (Node.isIdentifier(callee)) return callee.getText() === wanted && locals.has(wanted);
  if (Node.isPropertyAccessExpression(callee)) return callee.getName() === wanted && Node.isIdentifier(callee.getExpression()) && locals.has(callee.getExpression().getText());
  return false;
}

/**
 * The config text with `"mode": "transactional"` added to each named action, next to its `"name"`, keeping the
 * rest of the file byte for byte; undefined when an action's name cannot be found exactly once or the result does not
 * parse to the same config plus the mode.
 */
export function withTransactionalModes(configText: string, names: readonly string[]): string | undefined {
  let text = configText;
  for (const name of names) {
    const pattern = new RegExp(`("name"\\s*:\\s*)${escapeRegExp(JSON.stringify(name))}(\\s*,)?`, 'g');
    const matches = [...text.matchAll(pattern)];
    if (matches.length !== 1) return undefined;
    const m = matches[0]!;
    const end = m.index + m[0].length;
    const lineStart = text.lastIndexOf('\n', m.index) + 1;
    const indent = /^[ \t]*/.exec(text.slice(lineStart))![0];
    const sameLine = text.slice(lineStart, m.index).trim() !== '';
    const insert = m[2] && !sameLine ? `\n${indent}"mode": ${JSON.stringify('transactional')},` : m[2] ? ` "mode": ${JSON.stringify('transactional')},` : `, "mode": ${JSON.stringify('transactional')}`;
    text = `${text.slice(0, end)}${insert}${text.slice(end)}`;
  }
  try {
    const parsed = JSON.parse(text) as { actions?: Array<Record<string, unknown>> };
    const original = JSON.parse(configText) as { actions?: Array<Record<string, unknown>> };
    const expected = { ...original, actions: (original.actions ?? []).map((a) => (names.includes(String(a['name'])) ? { ...a, mode: 'transactional' } : a)) };
    return JSON.stringify(sortKeys(parsed)) === JSON.stringify(sortKeys(expected)) ? text : undefined;
  } catch {
    return undefined;
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, sortKeys(v)]));
  return value;
}
