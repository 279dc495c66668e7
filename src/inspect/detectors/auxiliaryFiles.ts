import type { Finding } from '../types.js';

/** Detectors for non-source files, read as text: the same registry idea, keyed by file name. */
export interface TextDetector {
  name: string;
  accepts(fileName: string): boolean;
  detect(rel: string, text: string): Finding[];
}

const vercelCrons: TextDetector = {
  name: 'vercel-crons',
  accepts: (name) => name === 'vercel.json',
  detect(rel, text) {
    let config: { crons?: Array<{ path?: unknown; schedule?: unknown }> };
    try {
      config = JSON.parse(text) as typeof config;
    } catch {
      return [];
    }
    const lines = text.split('\n');
    return (config.crons ?? []).flatMap((cron) => {
      if (typeof cron.path !== 'string') return [];
      const line = lines.findIndex((l) => l.includes(JSON.stringify(cron.path))) + 1 || 1;
      const schedule = typeof cron.schedule === 'string' ? cron.schedule : undefined;
      return [{ kind: 'cron' as const, id: `vercel ${cron.path}`, file: rel, line, scheduler: 'vercel', name: cron.path, ...(schedule ? { schedule } : {}) }];
    });
  },
};

const DEDUPE_NAME = /(idempotenc\w*|event_?id|request_?id|dedup\w*|message_?id|external_?id|webhook_?id)/i;

/** Prisma `@unique` / `@@unique` and SQL UNIQUE / PRIMARY KEY on dedupe columns. */
const schemaUniques: TextDetector = {
  name: 'schema-uniques',
  accepts: (name) => name.endsWith('.prisma') || name.endsWith('.sql'),
  detect(rel, text) {
    const out: Finding[] = [];
    const isSql = rel.endsWith('.sql');
    text.split('\n').forEach((line, i) => {
      if (/^\s*(--|\/\/)/.test(line)) return;
      const unique = isSql ? /\bunique\b|primary\s+key/i.test(line) : /@unique|@@unique|@id\b/.test(line);
      const column = DEDUPE_NAME.exec(line);
      if (unique && column?.[1]) {
        out.push({ kind: 'existing-idempotency', id: `unique-constraint unique ${column[1]}`, file: rel, line: i + 1, mechanism: 'unique-constraint', detail: `unique ${column[1]}` });
      }
    });
    return out;
  },
};

export const textDetectors: TextDetector[] = [vercelCrons, schemaUniques];
