import { ts } from 'ts-morph';
import { isFunctionLike } from '../../inspect/parse/astHelpers.js';
import { STRIPE_EVENT_TYPE } from '../stripeWebhooks.js';
import type { ProjectContext, ProjectReport, Rule } from '../types.js';
import { calls, collect, functionLabel, innermostFunction } from '../walk.js';

const WRITE_METHOD = /^(upsert|update|updateMany|updateOne|findOneAndUpdate|findByIdAndUpdate|replaceOne|delete|deleteMany|deleteOne|destroy|onConflictDoUpdate|onDuplicateKeyUpdate)$/;
/** The app's data layer (Prisma, Supabase, Knex, Drizzle, Mongoose models, TypeORM repositories), not a provider client or a Map. */
const DATA_RECEIVER = /prisma|\bdb\b|supabase|from\(|knex|collection|repo|repository|model|\btx\b|\btrx\b|drizzle|\.(insert|into)\(|^[A-Z]\w*$/;
/** A comparison on the event's or row's time or version, in any ORM's syntax. */
const ORDER_GUARD = /(created|version|updated_?at|updatedAt|event_?(time|created|at)|sequence|last_?event\w*|timestamp)\w*\s*['"]?\s*(<|>|<=|>=)|(<|>|<=|>=)\s*[\w.]*(created|version|updated|timestamp)|\b(lt|lte|gt|gte)\s*[:(][^\n]*(created|version|updated|timestamp)|(created|version|updated\w*|timestamp)\w*['"]?\s*[:,]\s*\{\s*(lt|lte|gt|gte)/i;

/** Stripe does not deliver events in order: an older event applied last overwrites newer state unless the write compares. */
export const blindEventUpsert: Rule = {
  id: 'blind-event-upsert',
  severity: 'warning',
  title: 'Event applied with a blind upsert or delete',
  description:
    'A write driven by a provider event overwrites or deletes the row without comparing the event\'s time or version ' +
    'with what is stored. Events arrive out of order and are redelivered, so an older `customer.subscription.updated` ' +
    'processed after a newer one rolls the subscription back.',
  fix: 'Store the event\'s `created` (or the object\'s version) with the row and make the write conditional: update only WHERE stored_event_created < this event\'s created; or re-fetch the object from the provider and write its current state.',
  docsAnchor: 'finding-blind-event-upsert',
  checkProject(ctx) {
    const eventFiles = ctx.sources.filter((s) => /constructEvent/.test(s.text) || STRIPE_EVENT_TYPE.test(s.text));
    const called = reachableNames(ctx.sources, eventFiles);
    const out: ProjectReport[] = [];
    for (const source of ctx.sources) {
      const isEventFile = eventFiles.includes(source);
      for (const call of calls(source.sf)) {
        if (!ts.isPropertyAccessExpression(call.expression) || !WRITE_METHOD.test(call.expression.name.text)) continue;
        const receiver = call.expression.expression.getText();
        if (/stripe/i.test(receiver) || !DATA_RECEIVER.test(receiver.split('\n').pop() ?? receiver)) continue;
        const fn = topNamedFunction(call);
        const name = functionLabel(fn);
        if (!isEventFile && !(name && called.has(name))) continue;
        if (isEventFile && !fn) continue;
        if (fn && ORDER_GUARD.test(fn.getText(source.sf))) continue;
        const pos = source.sf.getLineAndCharacterOfPosition(call.expression.name.getStart(source.sf));
        out.push({
          file: source.rel,
          line: pos.line + 1,
          ...(name ? { enclosingFunction: name } : {}),
          evidence: source.text.split('\n')[pos.line]?.trim() ?? '',
          message: `\`${call.expression.name.text}\` in ${name ?? 'this handler'} applies a provider event without comparing its created time or version: an older redelivered event overwrites newer data.`,
        });
      }
    }
    return out;
  },
};

function calledName(c: ts.CallExpression): string {
  return ts.isIdentifier(c.expression) ? c.expression.text : ts.isPropertyAccessExpression(c.expression) ? c.expression.name.text : '';
}

/** Names of functions an event handler reaches, up to three calls deep, across files (matched by name). */
function reachableNames(sources: ProjectContext['sources'], eventFiles: ProjectContext['sources']): Set<string> {
  const called = new Set(eventFiles.flatMap((s) => calls(s.sf).map(calledName)));
  const functions = sources.flatMap((s) => collect(s.sf, (n): n is ts.FunctionLikeDeclaration => isFunctionLike(n) && n.body !== undefined && functionLabel(n) !== undefined));
  for (let depth = 0; depth < 3; depth++) {
    const before = called.size;
    for (const fn of functions) if (called.has(functionLabel(fn) as string)) for (const c of calls(fn)) called.add(calledName(c));
    if (called.size === before) break;
  }
  called.delete('');
  return called;
}

/** The named function a write sits in, skipping callbacks (`.map(async (x) => …)`). */
function topNamedFunction(node: ts.Node): ts.FunctionLikeDeclaration | undefined {
  let fn = innermostFunction(node);
  while (fn && !functionLabel(fn)) {
    const outer = innermostFunction(fn);
    if (!outer) break;
    fn = outer;
  }
  return fn && isFunctionLike(fn) ? fn : undefined;
}

