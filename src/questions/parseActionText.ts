import { PROVIDERS, type Trigger } from '../config/schema.js';
import type { ActionAnswer } from './types.js';

/**
 * Reads the free-text answer to Q1 ("create payment POST /payments, stripe webhook, nightly invoice job") into
 * draft actions. Fingerprint fields are left empty: they are asked per action afterwards.
 */
export function parseActionText(text: string): ActionAnswer[] {
  return text
    .split(/[,;\n]/)
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .map(parseOne);
}

function parseOne(item: string): ActionAnswer {
  const http = /\b(POST|PUT|PATCH|DELETE)\s+(\/\S*)/i.exec(item);
  const words = (http ? item.replace(http[0], ' ') : item).split(/[^A-Za-z0-9]+/).filter(Boolean);
  const trigger = triggerOf(item, Boolean(http));
  const route = http ? `${http[1]?.toUpperCase()} ${http[2]}` : undefined;
  const name = words.length > 0 ? camel(words) : nameFromPath(http?.[2] ?? 'action');
  const provider = PROVIDERS.find((p) => new RegExp(`\\b${p}\\b`, 'i').test(item));
  return { name, trigger, ...(route ? { route } : {}), significantFields: [], ...(provider ? { provider } : {}) };
}

function triggerOf(item: string, hasRoute: boolean): Trigger {
  const lower = item.toLowerCase();
  if (/\bwebhooks?\b/.test(lower)) return 'webhook';
  if (hasRoute) return 'http';
  if (/\b(consumer|consume|queue|message|event|topic|kafka|sqs|rabbitmq|bullmq)\b/.test(lower)) return 'consumer';
  if (/\b(cron|job|nightly|daily|hourly|scheduled|schedule|batch)\b/.test(lower)) return 'cron';
  return 'http';
}

/** Words that only label the trigger ("sendNotification consumer"); they stay in the name when nothing else is left. */
const TRIGGER_LABELS = new Set(['consumer', 'cron', 'http', 'endpoint']);

function camel(all: string[]): string {
  const named = all.filter((w) => !TRIGGER_LABELS.has(w.toLowerCase()));
  const [first = 'action', ...rest] = named.length > 0 ? named : all;
  // Words already in camelCase ("createPayment") keep their inner capitals.
  const keep = (w: string) => (/[a-z][A-Z]/.test(w) ? w : w.toLowerCase());
  return keep(first)[0]?.toLowerCase() + keep(first).slice(1) + rest.map((w) => w[0]?.toUpperCase() + keep(w).slice(1)).join('');
}

function nameFromPath(route: string): string {
  const last = route.split('/').filter((s) => s !== '' && !s.startsWith(':')).pop() ?? 'action';
  return `create${last[0]?.toUpperCase()}${last.slice(1)}`;
}
