import { ts } from 'ts-morph';
import { isFunctionLike } from '../../inspect/parse/astHelpers.js';
import { dataAccesses, type DataAccess } from '../dataAccess.js';
import { mongoOnly } from '../documentStore.js';
import { isUnique, normaliseName } from '../schemaFacts.js';
import { providerCalls } from '../providerCalls.js';
import type { Rule, RuleReport } from '../types.js';
import { calls, collect, functionLabel, innermostFunction } from '../walk.js';

/** Serialising evidence: row locks, advisory locks, distributed locks, serializable transactions. */
const LOCK = /for\s+update|advisory_x?act_lock|advisory_lock|\bredlock\b|\bmutex\b|acquireLock|\.lock\(|withLock|serializable/i;

/** Two concurrent requests both see "missing" and both create, unless the database or a lock makes the second fail. */
export const readThenCreate: Rule = {
  id: 'read-then-create',
  severity: 'warning',
  title: 'Read-then-create without a unique constraint or lock',
  description:
    'The code looks a record up and creates it when none is found. Two concurrent requests (a double click, a retry ' +
    'racing the original, two webhook deliveries) both see nothing and both create: duplicates, or for a provider ' +
    'customer two billing histories. Only a unique constraint or a lock makes the second attempt fail.',
  fix: 'Add a unique constraint on the lookup columns and insert with ON CONFLICT (or catch the unique violation and re-read); for a provider object, pass an idempotencyKey derived from the local id (e.g. `customer:${userId}`) and store the id in a unique column.',
  docsAnchor: 'finding-read-then-create',
  mentions: /find|select|from\(|customers\.(list|search)/,
  checkFile(ctx) {
    const out: RuleReport[] = [];
    const keyed = new Set(providerCalls(ctx).filter((c) => c.key || c.opaqueOptions).map((c) => c.call));
    const named = collect(ctx.sf, (n): n is ts.FunctionLikeDeclaration => isFunctionLike(n) && n.body !== undefined && functionLabel(n) !== undefined);
    const byName = new Map(named.map((fn) => [functionLabel(fn) as string, fn]));
    for (const fn of named) {
      if (LOCK.test(fn.getText(ctx.sf))) continue;
      const accesses = dataAccesses(fn);
      // A create one call away (`createCustomerInStripe(...)` in the same file) counts at the call site.
      const creates: Array<{ access: DataAccess; at: number }> = accesses.filter((a) => a.kind === 'create').map((access) => ({ access, at: access.call.getStart() }));
      for (const call of calls(fn)) {
        const callee = ts.isIdentifier(call.expression) ? byName.get(call.expression.text) : undefined;
        if (!callee || callee === fn || LOCK.test(callee.getText(ctx.sf))) continue;
        for (const access of dataAccesses(callee)) if (access.kind === 'create') creates.push({ access, at: call.getStart() });
      }
      for (const { access: create, at } of creates) {
        if (keyed.has(create.call)) continue;
        // The read must run before the create on the same path: in the create's function or one around it, never in a
        // sibling (a factory's `return { paginate() { select }, create() { insert } }` reads in one method and
        // creates in another).
        const read = accesses.find((a) => a.kind === 'read' && a.call.end <= at && sameTarget(a.target, create.target) && encloses(scopeOf(a.call, fn), at));
        if (!read) continue;
        const line = (node: ts.Node) => ctx.sf.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        // A lookup by `id` is by the primary key, which the database keeps unique whatever the schema files say:
        // `findOne({ where: { id } })` then `save(…)` updates or fails, it never creates a second row for that id.
        // Unless the create does not write that id (the database assigns one): then the lookup never finds the row the
        // create wrote, and every resend creates another.
        if (create.target !== 'stripe.customers' && read.columns.some((c) => normaliseName(c) === 'id')) {
          const written = createdColumns(create);
          if (written === undefined || written.some((c) => normaliseName(c) === 'id')) continue;
          out.push({
            node: create.call,
            fix: `Write the id the lookup reads in the create (\`id: <the looked-up value>\`), or look the row up by a column the create does write and that has a unique constraint (the sender's own reference), and insert with ON CONFLICT or catch the unique violation.`,
            message: `${functionLabel(fn)} looks up \`${create.target}\` by id on line ${line(read.call)} and creates it ${create.call.getStart() === at ? 'here' : `through the call on line ${ctx.sf.getLineAndCharacterOfPosition(at).line + 1}`} when missing, but the create does not write that id (the database assigns a new one): the lookup never finds the row it wrote, so every resend creates another.`,
          });
          continue;
        }
        if (create.target !== 'stripe.customers' && isUnique(ctx.schema, create.target, read.columns)) continue;
        const what = create.target === 'stripe.customers' ? 'a Stripe customer (Stripe enforces no uniqueness)' : `\`${create.target}\``;
        const cols = read.columns.length ? ` on (${read.columns.join(', ')})` : '';
        const noSchema = create.target !== 'stripe.customers' && !ctx.schema.unique.size;
        const mongo = create.target !== 'stripe.customers' && mongoOnly(ctx);
        out.push({
          node: create.call,
          ...(noSchema ? { severity: 'note' as const } : {}),
          ...(mongo ? { fix: `Add a unique index on the lookup fields${cols ? ` (${read.columns.join(', ')})` : ''} of \`${create.target}\` and write with \`updateOne(filter, { $setOnInsert: … }, { upsert: true })\`, or catch the duplicate-key error (code 11000) and re-read.` } : {}),
          message: `${functionLabel(fn)} looks up ${what}${cols} on line ${line(read.call)} and creates it ${create.call.getStart() === at ? 'here' : `through the call on line ${ctx.sf.getLineAndCharacterOfPosition(at).line + 1}`} when missing, with ${create.target === 'stripe.customers' ? 'no idempotency key' : noSchema ? 'no schema file in the project to show a unique constraint' : 'no unique constraint on those columns'} and no lock: concurrent calls create duplicates.`,
        });
      }
    }
    return dedupeNested(out);
  },
};

/**
 * The columns a create writes, when its data is an object literal without spreads: Prisma's `create({ data: { … } })`,
 * or the object itself (`Model.create({ … })`, `repo.insert({ … })`). Undefined when they cannot be read.
 */
function createdColumns(create: DataAccess): string[] | undefined {
  const arg = create.call.arguments[0];
  if (!arg || !ts.isObjectLiteralExpression(arg)) return undefined;
  const data = arg.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'data');
  const object = data ? data.initializer : arg;
  if (!ts.isObjectLiteralExpression(object) || object.properties.some((p) => !ts.isPropertyAssignment(p) && !ts.isShorthandPropertyAssignment(p))) return undefined;
  return object.properties.flatMap((p) => (p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? [p.name.text] : []));
}

/** The function a read runs in; a callback (`db.transaction(async (trx) => …)`, `.then(…)`) counts as its caller's. */
function scopeOf(node: ts.Node, outer: ts.Node): ts.Node {
  let scope: ts.Node = innermostFunction(node) ?? outer;
  while (scope !== outer && (ts.isArrowFunction(scope) || ts.isFunctionExpression(scope)) && ts.isCallExpression(scope.parent)) {
    scope = innermostFunction(scope) ?? outer;
  }
  return scope;
}

function encloses(node: ts.Node, position: number): boolean {
  return node.getStart() <= position && position < node.end;
}

function sameTarget(a: string, b: string): boolean {
  const na = normaliseName(a).replace(/s$/, '');
  const nb = normaliseName(b).replace(/s$/, '');
  return na === nb;
}

/**
 * Nested named functions see the same create twice; keep one report per node, the innermost function's (functions
 * are walked outer first): `create` in a repository factory, not the factory around it.
 */
function dedupeNested(reports: RuleReport[]): RuleReport[] {
  const last = new Map<ts.Node, RuleReport>();
  for (const report of reports) last.set(report.node, report);
  return reports.filter((r) => last.get(r.node) === r);
}
