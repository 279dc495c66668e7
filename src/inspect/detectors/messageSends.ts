import { ts } from 'ts-morph';
import { propertyName, unwrap } from '../parse/astHelpers.js';
import type { SourceIndex } from '../parse/indexSource.js';
import { MESSAGE_LABELS, type MessageChannel } from '../messageLabels.js';

export type { MessageChannel };

/**
 * Messages sent to a person (e-mail, SMS, push): the effect a duplicate request repeats where a human sees it. Not
 * payment providers: no money moves, but a second copy reaches someone. A send is recognised only on a receiver the
 * file can trace to the library (a client it constructs, or one a project module exports), never by the method name
 * alone: a project's own `send()` or `sendMail()` is not a message.
 */
export type MessageLibrary = 'nodemailer' | 'sendgrid' | 'resend' | 'postmark' | 'mailgun' | 'ses' | 'twilio' | 'firebase' | 'web-push';

export const MESSAGE_MODULES: Readonly<Record<string, MessageLibrary>> = {
  nodemailer: 'nodemailer', '@sendgrid/mail': 'sendgrid', resend: 'resend', postmark: 'postmark', 'mailgun.js': 'mailgun',
  '@aws-sdk/client-ses': 'ses', '@aws-sdk/client-sesv2': 'ses', twilio: 'twilio', 'firebase-admin': 'firebase',
  'firebase-admin/messaging': 'firebase', 'web-push': 'web-push',
};

/** Which calls send, and how a client is made; names and channels are in messageLabels.ts. */
interface LibrarySpec {
  /** Send operations as the path after the client: `sendMail`, `emails.send`. */
  sends: readonly string[];
  /** The module object is itself a client (`sgMail.send`, `webpush.sendNotification`). */
  moduleIsClient?: true;
  /** Calling (or `new`) these exports of the module makes a client; `()` is the module itself called (`twilio(sid, token)`). */
  makers: readonly string[];
  /** Where the library takes an idempotency key: the second argument's `idempotencyKey` (Resend's request options). */
  keyOption?: { argument: number; name: string };
}

export const MESSAGE_LIBRARIES: Readonly<Record<MessageLibrary, LibrarySpec>> = {
  nodemailer: { sends: ['sendMail'], makers: ['createTransport'] },
  sendgrid: { sends: ['send', 'sendMultiple'], moduleIsClient: true, makers: ['MailService'] },
  // resend 6.38.0's type definitions (dist/index.d.mts): `emails.send(payload, requestOptions?: CreateEmailRequestOptions)` and the same for
  // `batch.send`, where the request options extend `IdempotentRequest { idempotencyKey?: string }`.
  resend: { sends: ['emails.send', 'emails.create', 'batch.send', 'batch.create'], makers: ['Resend'], keyOption: { argument: 1, name: 'idempotencyKey' } },
  postmark: { sends: ['sendEmail', 'sendEmailBatch', 'sendEmailWithTemplate', 'sendEmailBatchWithTemplates'], makers: ['ServerClient', 'Client'] },
  mailgun: { sends: ['messages.create'], makers: [] },
  ses: { sends: [], makers: [] },
  twilio: { sends: ['messages.create'], makers: ['()', 'Twilio'] },
  firebase: { sends: ['send', 'sendEach', 'sendEachForMulticast', 'sendMulticast', 'sendAll', 'sendToDevice', 'sendToDeviceGroup', 'sendToTopic', 'sendToCondition'], makers: ['messaging', 'getMessaging'] },
  'web-push': { sends: ['sendNotification'], moduleIsClient: true, makers: [] },
};

/** The SES commands that send mail: `client.send(new SendEmailCommand(input))`. */
const SES_SEND_COMMANDS = /^Send(Raw|Templated|BulkTemplated|Bulk|CustomVerification)?EmailCommand$/;

/** What an expression holds, traced to a messaging library. */
export interface Held {
  library: MessageLibrary;
  /** `module`: the package object; `export`: one of its exports; `client`: a sending client; `factory`/`app`: a step towards one. */
  state: 'module' | 'export' | 'client' | 'factory' | 'app';
  name?: string;
}

/** A binding imported from a project module, for the caller to follow across files: what that module exports under `name`. */
export type ImportedHeld = (module: string, name: string) => Held | undefined;

export interface MessageSend {
  call: ts.CallExpression;
  library: MessageLibrary;
  channel: MessageChannel;
  /** As written after the client: `sendMail`, `emails.send`, `send(SendEmailCommand)`. */
  operation: string;
  /** The library's idempotency key option, when passed (Resend's `{ idempotencyKey }`). */
  key?: ts.Expression;
  /** The options argument exists but is not a literal we can read: the key may be inside. */
  opaqueOptions?: true;
}

/** Cheap text test for the detector: a file that may send (or hand on a client that sends). */
export const MESSAGE_MENTIONS = /\.(?:sendMail|send|sendMultiple|sendEmail\w*|sendNotification|sendEach\w*|sendMulticast|sendAll|sendTo\w+)\s*\(|\.messages\.create\s*\(|\bsendNotification\s*\(/;

interface Scope {
  sf: ts.SourceFile;
  index: SourceIndex;
  imported?: ImportedHeld;
}

/** Message sends in one file, in source order. */
export function messageSends(sf: ts.SourceFile, index: SourceIndex, imported?: ImportedHeld): MessageSend[] {
  const scope: Scope = { sf, index, ...(imported ? { imported } : {}) };
  const out: MessageSend[] = [];
  for (const call of index.calls) {
    const found = matchSend(call, scope);
    if (found) out.push(found);
  }
  return out.sort((a, b) => a.call.pos - b.call.pos);
}

/** What a file exports under `name` when it is a messaging client (or the library itself): `module.exports = transport`. */
export function exportedHeld(sf: ts.SourceFile, index: SourceIndex, name: string, imported?: ImportedHeld): Held | undefined {
  const scope: Scope = { sf, index, ...(imported ? { imported } : {}) };
  const local = index.exports.get(name);
  if (local !== undefined && local !== '<default>') {
    const held = identifierHeld(local, scope, new Set());
    if (held) return held;
  }
  if (name !== 'default') return undefined;
  // `export default new Resend(key)`, `module.exports = nodemailer.createTransport(options)`.
  for (const statement of sf.statements) {
    let expr: ts.Expression | undefined;
    if (ts.isExportAssignment(statement)) expr = statement.expression;
    else if (ts.isExpressionStatement(statement) && ts.isBinaryExpression(statement.expression) && statement.expression.operatorToken.kind === ts.SyntaxKind.EqualsToken && statement.expression.left.getText(sf) === 'module.exports') expr = statement.expression.right;
    if (expr) return heldBy(expr, scope, new Set());
  }
  return undefined;
}

function matchSend(call: ts.CallExpression, scope: Scope): MessageSend | undefined {
  const callee = unwrap(call.expression);
  // `sendNotification(subscription, payload)` imported by name from web-push.
  if (ts.isIdentifier(callee)) {
    const held = identifierHeld(callee.text, scope, new Set());
    if (held?.state === 'export' && held.library === 'web-push' && held.name === 'sendNotification') return send(call, 'web-push', 'sendNotification');
    return undefined;
  }
  if (!ts.isPropertyAccessExpression(callee)) return undefined;
  const method = callee.name.text;
  if (method === 'send') {
    const command = sesCommand(call, scope);
    if (command) return send(call, 'ses', `send(${command})`);
  }
  // The receiver before `emails.send`, `messages.create`, `sendMail`.
  for (const library of Object.keys(MESSAGE_LIBRARIES) as MessageLibrary[]) {
    const spec = MESSAGE_LIBRARIES[library];
    for (const operation of spec.sends) {
      const parts = operation.split('.');
      let node: ts.Expression = callee;
      let fits = true;
      for (const part of [...parts].reverse()) {
        node = unwrap(node);
        if (!ts.isPropertyAccessExpression(node) || node.name.text !== part) {
          fits = false;
          break;
        }
        node = node.expression;
      }
      if (!fits) continue;
      const held = heldBy(node, scope, new Set());
      if (held?.library !== library) continue;
      if (held.state === 'client' || (held.state === 'module' && spec.moduleIsClient)) return send(call, library, operation);
    }
  }
  return undefined;
}

function send(call: ts.CallExpression, library: MessageLibrary, operation: string): MessageSend {
  const spec = MESSAGE_LIBRARIES[library];
  const found: MessageSend = { call, library, channel: MESSAGE_LABELS[library]!.channel, operation };
  if (!spec.keyOption) return found;
  const arg = call.arguments[spec.keyOption.argument];
  if (!arg) return found;
  const options = unwrap(arg);
  if (!ts.isObjectLiteralExpression(options)) return { ...found, opaqueOptions: true };
  for (const p of options.properties) {
    if (ts.isPropertyAssignment(p) && propertyName(p.name) === spec.keyOption.name) return { ...found, key: p.initializer };
    if (ts.isShorthandPropertyAssignment(p) && p.name.text === spec.keyOption.name) return { ...found, key: p.name };
    if (ts.isSpreadAssignment(p)) return { ...found, opaqueOptions: true };
  }
  return found;
}

/** `client.send(new SendEmailCommand(input))` (or a const holding the command) with the command from the SES package. */
function sesCommand(call: ts.CallExpression, scope: Scope): string | undefined {
  let arg = call.arguments[0] ? unwrap(call.arguments[0]) : undefined;
  if (arg && ts.isIdentifier(arg)) {
    const init = scope.index.consts.get(arg.text);
    arg = init ? unwrap(init) : arg;
  }
  if (!arg || !ts.isNewExpression(arg)) return undefined;
  const held = heldBy(arg.expression, scope, new Set());
  return held?.library === 'ses' && held.state === 'export' && held.name && SES_SEND_COMMANDS.test(held.name) ? held.name : undefined;
}

function heldBy(expr: ts.Expression, scope: Scope, seen: Set<string>): Held | undefined {
  const node = unwrap(expr);
  if (ts.isIdentifier(node)) return identifierHeld(node.text, scope, seen);
  if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require') {
    const arg = node.arguments[0];
    if (!arg || !ts.isStringLiteral(arg)) return undefined;
    const library = MESSAGE_MODULES[arg.text];
    if (library) return { library, state: 'module' };
    return arg.text.startsWith('.') ? scope.imported?.(arg.text, 'default') : undefined;
  }
  if (ts.isPropertyAccessExpression(node)) {
    const name = node.name.text;
    // `this.mailer`: what the class assigns to that field.
    if (node.expression.kind === ts.SyntaxKind.ThisKeyword) return fieldHeld(node, name, scope, seen);
    const base = heldBy(node.expression, scope, seen);
    if (base?.state === 'module') return { library: base.library, state: 'export', name };
    // `services.mailer` through `import * as services from './services'`.
    if (ts.isIdentifier(node.expression)) {
      const binding = scope.index.imports.get(node.expression.text);
      if (binding && binding.imported === '*' && binding.module.startsWith('.')) return scope.imported?.(binding.module, name);
    }
    return undefined;
  }
  if (ts.isNewExpression(node) || ts.isCallExpression(node)) return madeBy(node, scope, seen);
  return undefined;
}

/** What calling or constructing `node` gives: a client, or a step towards one (Mailgun's factory, a Firebase app). */
function madeBy(node: ts.NewExpression | ts.CallExpression, scope: Scope, seen: Set<string>): Held | undefined {
  const callee = unwrap(node.expression);
  if (ts.isPropertyAccessExpression(callee)) {
    const base = heldBy(callee.expression, scope, seen);
    const method = callee.name.text;
    if (base?.state === 'factory' && method === 'client') return { library: base.library, state: 'client' };
    if (base?.state === 'app' && method === 'messaging') return { library: base.library, state: 'client' };
    if (base?.state === 'module') return made(base.library, method, ts.isNewExpression(node));
    return undefined;
  }
  const target = heldBy(callee, scope, seen);
  if (!target) return undefined;
  if (target.state === 'module') {
    // `new Mailgun(FormData)` (the module's class); `twilio(sid, token)` (the module's function).
    if (target.library === 'mailgun') return { library: 'mailgun', state: 'factory' };
    return made(target.library, '()', ts.isNewExpression(node));
  }
  if (target.state === 'export' && target.name) {
    if (target.library === 'mailgun' && target.name === 'default') return { library: 'mailgun', state: 'factory' };
    return made(target.library, target.name, ts.isNewExpression(node));
  }
  return undefined;
}

function made(library: MessageLibrary, name: string, constructed: boolean): Held | undefined {
  if (library === 'firebase' && name === 'initializeApp') return { library, state: 'app' };
  if (MESSAGE_LIBRARIES[library].makers.includes(name)) return { library, state: 'client' };
  // `new Mailgun(FormData)` imported by name; `new twilio.Twilio(…)` is in makers.
  if (library === 'mailgun' && constructed && name === 'Mailgun') return { library, state: 'factory' };
  return undefined;
}

function identifierHeld(name: string, scope: Scope, seen: Set<string>): Held | undefined {
  if (seen.has(name)) return undefined;
  seen.add(name);
  const binding = scope.index.imports.get(name);
  if (binding) {
    const library = MESSAGE_MODULES[binding.module];
    if (library) return binding.imported === '*' || binding.imported === 'default' ? { library, state: 'module' } : { library, state: 'export', name: binding.imported };
    if (binding.module.startsWith('.') || binding.module.startsWith('@/') || binding.module.startsWith('~/')) {
      // `const transport = require('./transport')`: that module's `module.exports`.
      return scope.imported?.(binding.module, binding.imported === '*' ? 'default' : binding.imported);
    }
    return undefined;
  }
  const init = scope.index.consts.get(name);
  return init ? heldBy(init, scope, seen) : undefined;
}

/** `this.transport` set in the class (a field initializer or `this.transport = …` anywhere in it). */
function fieldHeld(access: ts.PropertyAccessExpression, name: string, scope: Scope, seen: Set<string>): Held | undefined {
  let cls: ts.Node | undefined = access.parent;
  while (cls && !ts.isClassLike(cls)) cls = cls.parent;
  if (!cls || !ts.isClassLike(cls)) return undefined;
  let found: Held | undefined;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (ts.isPropertyDeclaration(node) && propertyName(node.name) === name && node.initializer) found = heldBy(node.initializer, scope, seen);
    else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isPropertyAccessExpression(node.left) && node.left.expression.kind === ts.SyntaxKind.ThisKeyword && node.left.name.text === name) found = heldBy(node.right, scope, seen);
    else ts.forEachChild(node, visit);
  };
  ts.forEachChild(cls, visit);
  return found;
}
