import { ts } from 'ts-morph';
import { perAttemptCallKey, perAttemptClaimAt } from '../../findings/conflictKey.js';
import { perAttemptValue } from '../../findings/volatile.js';
import { accessChain, displayName, objectProperty, stringValue, unwrap } from '../parse/astHelpers.js';
import { isOwnStoreFile } from './auxiliaryFiles.js';
import type { Detector, FileContext, FileFacts } from './detectorTypes.js';

const MIDDLEWARE_PACKAGES = /^(express-idempotency|idempotency-middleware|@node-idempotency\/.+|fastify-idempotency|@fastify\/idempotency|hono-idempotency|@idempotent\/.+|nestjs-idempotency|@nestjs-idempotency\/.+)$/;
const IDEMPOTENCY_HEADER = /^(x-)?idempotency-key$/i;
const UPSERT_METHOD = /^(upsert|onConflictDoNothing|onConflictDoUpdate|orIgnore|orUpdate|onConflict|updateOne|updateMany|findOneAndUpdate|replaceOne)$/;
const UNIQUE_VIOLATION = /^(P2002|23505|ER_DUP_ENTRY|SQLITE_CONSTRAINT_UNIQUE|ConditionalCheckFailedException)$/;

/** Protection the code already has, so the design credits it instead of re-designing it. */
export const existingIdempotency: Detector = {
  name: 'existing-idempotency',
  mentions: /idempot|upsert|onConflict|on conflict|orIgnore|jobId|deduplication|MessageDeduplicationId|P2002|23505|ER_DUP_ENTRY|unique|attribute_not_exists|\bNX\b|setnx/i,
  detect(ctx, facts) {
    // The store's own schema or migration, written by this tool into the project's folders.
    if (isOwnStoreFile(ctx.text)) return;
    for (const binding of new Set([...ctx.index.imports.values()].map((b) => b.module))) {
      if (MIDDLEWARE_PACKAGES.test(binding)) push(ctx, facts, 1, 'idempotency-middleware', `uses ${binding}`);
    }
    const seenLines = new Set<string>();
    for (const call of ctx.index.calls) inspectCall(call, ctx, facts, seenLines);
    for (const expr of ctx.index.news) inspectCommandInput(expr.arguments?.[0], lineOf(ctx, expr), ctx, facts, seenLines);
    inspectStrings(ctx, facts, seenLines);
    inspectUniqueDeclarations(ctx, facts, seenLines);
  },
};

/**
 * A node's line, worked out when a finding needs it: most calls of a file protect nothing, and a line costs a skip
 * over the node's leading comments and a search of the line table.
 */
function lineOf(ctx: FileContext, node: ts.Node): () => number {
  let line: number | undefined;
  return () => (line ??= ctx.line(node));
}

function push(ctx: FileContext, facts: FileFacts, lineAt: number | (() => number), mechanism: string, detail: string, seen?: Set<string>): void {
  const line = typeof lineAt === 'number' ? lineAt : lineAt();
  const key = `${line}:${mechanism}`;
  if (seen?.has(key)) return;
  seen?.add(key);
  facts.findings.push({ kind: 'existing-idempotency', id: `${mechanism} ${detail}`, file: ctx.rel, line, mechanism, detail });
}

function inspectCall(call: ts.CallExpression, ctx: FileContext, facts: FileFacts, seen: Set<string>): void {
  const callee = call.expression;
  const method = ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
  const line = lineOf(ctx, call);
  // Reading the Idempotency-Key request header: req.get('Idempotency-Key'), request.headers.get(…), c.req.header(…).
  if (/^(get|header)$/.test(method) && IDEMPOTENCY_HEADER.test(stringValue(call.arguments[0]) ?? '')) {
    push(ctx, facts, line, 'idempotency-middleware', 'reads the Idempotency-Key request header', seen);
  }
  // An upsert keyed on a value made fresh per attempt (`where: { id: randomUUID() }`) never conflicts: no protection.
  if (UPSERT_METHOD.test(method) && perAttemptCallKey(call)) return;
  const receiver = method === 'upsert' && ts.isPropertyAccessExpression(callee) ? accessChain(callee.expression).map((p) => p.replace(/\(\)$/, '')) : [];
  if (method === 'upsert' && receiver.length) {
    push(ctx, facts, line, 'upsert-unique', `${receiver.slice(-1)[0]}.upsert${uniqueWhere(call)}`, seen);
  } else if (/^(onConflictDoNothing|onConflictDoUpdate|orIgnore|orUpdate)$/.test(method)) {
    push(ctx, facts, line, 'upsert-unique', `${method}()`, seen);
  } else if (method === 'onConflict') {
    push(ctx, facts, line, 'upsert-unique', `onConflict(${stringValue(call.arguments[0]) ?? ''})`, seen);
  } else if (/^(updateOne|updateMany|findOneAndUpdate|replaceOne|bulkWrite)$/.test(method) && call.arguments.some((a) => unwrap(a).kind === ts.SyntaxKind.ObjectLiteralExpression && objectProperty(a, 'upsert')?.kind === ts.SyntaxKind.TrueKeyword)) {
    push(ctx, facts, line, 'upsert-unique', `${method} with upsert: true`, seen);
  } else if (/^(add|addBulk)$/.test(method)) {
    const opts = call.arguments[2];
    const jobId = objectProperty(opts, 'jobId');
    // `jobId: randomUUID()` is new on every add: the queue never sees the same job twice, so it is no dedupe.
    if (jobId) {
      if (!perAttemptValue(jobId)) push(ctx, facts, line, 'job-id-dedupe', `job ${displayName(call.arguments[0], ctx.index.consts) ?? 'unnamed'} added with a deterministic jobId`, seen);
    } else if (objectProperty(opts, 'deduplication')) push(ctx, facts, line, 'job-id-dedupe', `job ${displayName(call.arguments[0], ctx.index.consts) ?? 'unnamed'} added with deduplication`, seen);
  }
  // Redis `SET key value NX` (ioredis' 'NX' argument, node-redis' { NX: true }) or SETNX: a first-writer-wins claim
  // (orders-bullmq's dispatch skips a jobId it has seen: `redis.set(jobIdKey, "1", "NX")`).
  const nx = method === 'set' && call.arguments.length >= 3 && call.arguments.slice(2).some((a) => stringValue(a)?.toUpperCase() === 'NX' || objectProperty(a, 'NX')?.kind === ts.SyntaxKind.TrueKeyword);
  if ((nx || /^set[nN][xX]$/.test(method)) && call.arguments[0] && !perAttemptValue(call.arguments[0])) push(ctx, facts, line, 'set-nx', `claims ${displayName(call.arguments[0], ctx.index.consts) ?? 'a key'} with Redis SET NX (the first writer wins)`, seen);
  inspectCommandInput(call.arguments[0], line, ctx, facts, seen);
  inspectProducer(call, method, line, ctx, facts, seen);
}

/** AWS SDK command inputs, passed to a call or to `new PutItemCommand({...})`. */
function inspectCommandInput(input: ts.Expression | undefined, line: () => number, ctx: FileContext, facts: FileFacts, seen: Set<string>): void {
  if (objectProperty(input, 'MessageDeduplicationId')) push(ctx, facts, line, 'fifo-dedupe', 'SQS FIFO MessageDeduplicationId', seen);
  if (objectProperty(input, 'ConditionExpression') && /attribute_not_exists/.test(input?.getText(ctx.sf) ?? '')) {
    push(ctx, facts, line, 'conditional-put', 'DynamoDB put with attribute_not_exists', seen);
  }
}

function inspectProducer(call: ts.CallExpression, method: string, line: () => number, ctx: FileContext, facts: FileFacts, seen: Set<string>): void {
  if (method === 'producer' && objectProperty(call.arguments[0], 'idempotent')?.kind === ts.SyntaxKind.TrueKeyword) {
    push(ctx, facts, line, 'idempotent-producer', 'kafkajs producer with idempotent: true', seen);
  }
}

/** ` by idempotencyKey` when the upsert's `where` names a dedupe column. */
function uniqueWhere(call: ts.CallExpression): string {
  const where = objectProperty(call.arguments[0], 'where');
  if (!where || !ts.isObjectLiteralExpression(unwrap(where))) return '';
  const names = (unwrap(where) as ts.ObjectLiteralExpression).properties.map((p) => p.name?.getText() ?? '').filter(Boolean);
  return names.length ? ` by ${names.join(', ')}` : '';
}

/**
 * This walk visits every node of the file: kinds compared by number, and ts-morph's `ts` (an object of getters) read
 * once here instead of five times a node.
 */
const STRING_KINDS = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.StringLiteral, ts.SyntaxKind.NoSubstitutionTemplateLiteral, ts.SyntaxKind.TemplateHead, ts.SyntaxKind.TemplateMiddle,
  ts.SyntaxKind.TemplateTail,
]);
const NUMERIC_LITERAL = ts.SyntaxKind.NumericLiteral;
const forEachChild = ts.forEachChild;

/** SQL in strings (`ON CONFLICT`, `ON DUPLICATE KEY`), header reads by index, unique-violation handling. */
function inspectStrings(ctx: FileContext, facts: FileFacts, seen: Set<string>): void {
  const visit = (node: ts.Node): void => {
    if (STRING_KINDS.has(node.kind)) {
      const text = (node as ts.StringLiteral | ts.NoSubstitutionTemplateLiteral | ts.TemplateLiteralLikeNode).text;
      const sql = /on\s+conflict\s*(\(([^)]*)\))?\s*do\s+(nothing|update)|on\s+duplicate\s+key\s+update|insert\s+ignore/i.exec(text);
      if (sql && !perAttemptClaimAt(ctx.sf, node.getStart(ctx.sf))) push(ctx, facts, ctx.line(node), 'upsert-unique', sql[0].replace(/\s+/g, ' ').toUpperCase().replace(/\((.*)\)/, (m) => m.toLowerCase()), seen);
      if (UNIQUE_VIOLATION.test(text) && isComparedToCode(node)) push(ctx, facts, ctx.line(node), 'unique-constraint', `treats unique violation ${text} as a duplicate`, seen);
      if (IDEMPOTENCY_HEADER.test(text) && node.parent && ts.isElementAccessExpression(node.parent)) {
        push(ctx, facts, ctx.line(node), 'idempotency-middleware', 'reads the Idempotency-Key request header', seen);
      }
    } else if (node.kind === NUMERIC_LITERAL && (node as ts.NumericLiteral).text === '11000' && isComparedToCode(node)) {
      push(ctx, facts, ctx.line(node), 'unique-constraint', 'treats MongoDB duplicate key 11000 as a duplicate', seen);
    }
    forEachChild(node, visit);
  };
  visit(ctx.sf);
}

function isComparedToCode(node: ts.Node): boolean {
  const parent = node.parent;
  if (parent && ts.isBinaryExpression(parent)) return /code|errno/i.test(parent.getText());
  if (parent && ts.isCaseClause(parent)) return true;
  return false;
}

/** ORM declarations of a unique dedupe column: `@Column({ unique: true }) idempotencyKey`, drizzle `.unique()`. */
function inspectUniqueDeclarations(ctx: FileContext, facts: FileFacts, seen: Set<string>): void {
  const lines = ctx.text.split('\n');
  lines.forEach((text, i) => {
    if (!/unique/i.test(text) || /^\s*(\/\/|\*)/.test(text)) return;
    const context = `${lines[i - 1] ?? ''}\n${text}\n${lines[i + 1] ?? ''}`;
    const column = /\b([A-Za-z_]*(?:idempotenc[A-Za-z_]*|event_?[iI]d|request_?[iI]d|dedup[A-Za-z_]*|message_?[iI]d|external_?[iI]d|webhook_?[iI]d))\b/.exec(/unique\s*\(\s*\[?['"`]/i.test(text) ? text : context);
    if (column?.[1] && /unique\s*[:(]|\.unique\(|@Unique|@@unique|unique:\s*true|uniqueIndex/i.test(text)) {
      push(ctx, facts, i + 1, 'unique-constraint', `unique ${column[1]}`, seen);
    }
  });
}
