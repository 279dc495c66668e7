import type { ts } from 'ts-morph';
import { exportedHeld, MESSAGE_MENTIONS, messageSends, type Held, type ImportedHeld, type MessageSend } from '../inspect/detectors/messageSends.js';
import { fileContext } from './providerCalls.js';
import type { SourceContext } from './types.js';

/** How many project modules a client is followed through (`lib/mailer` re-exported by `services/index`). */
const MAX_HOPS = 3;

type Resolve = (from: string, spec: string) => SourceContext | undefined;

const found = new WeakMap<ts.SourceFile, MessageSend[]>();

/**
 * Message sends (e-mail, SMS, push) in one parsed source, by the inspector's matcher: on a client the file makes, or one
 * it imports from a project module (`const transport = require('../config/mailer')`), followed through `resolve`.
 */
export function messageCalls(source: SourceContext, resolve: Resolve): MessageSend[] {
  if (!MESSAGE_MENTIONS.test(source.text)) return [];
  const cached = found.get(source.sf);
  if (cached) return cached;
  const out = messageSends(source.sf, fileContext(source).index, importedFrom(source, resolve, 0));
  found.set(source.sf, out);
  return out;
}

function importedFrom(source: SourceContext, resolve: Resolve, hops: number): ImportedHeld | undefined {
  if (hops >= MAX_HOPS) return undefined;
  return (module: string, name: string): Held | undefined => {
    const target = resolve(source.rel, module);
    if (!target || target === source) return undefined;
    return exportedHeld(target.sf, fileContext(target).index, name, importedFrom(target, resolve, hops + 1));
  };
}
