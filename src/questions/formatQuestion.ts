import { FORMATS } from '../config/schema.js';
import { parseChoice } from './parseFlagValue.js';
import type { Question } from './types.js';

// Same default as generate's; repeated here so the wizard's start-up does not load the renderer and prettier.
const defaultOutput = (format: 'html' | 'md') => (format === 'md' ? 'docs/idempotency-design.md' : 'docs/idempotency-design.html');

/** Asked first, as the spec requires: the document format decides the default output path. */
export const formatQuestion: Question<'format'> = {
  key: 'format',
  title: 'Document format',
  help: 'HTML is one self-contained page that opens in any browser; Markdown renders on GitHub/GitLab with Mermaid diagrams.',
  examples: ['html', 'md'],
  flags: ['--format'],
  flagExample: '--format md',
  inspectable: false,
  needsConsent: false,
  fromFlags: (flags) => (flags.format === undefined ? undefined : parseChoice('--format', flags.format, FORMATS)),
  fromConfig: (config) => (FORMATS.includes(config['format'] as never) ? (config['format'] as 'html' | 'md') : undefined),
  infer: () => undefined,
  whenNeeded: () => true,
  fallback: () => ({ value: 'html' }),
  ask: (ctx, prefill) =>
    ctx.prompter.select({
      id: 'format',
      message: 'Format of the design document?',
      help: formatQuestion.help,
      choices: [
        { value: 'html' as const, name: 'HTML (single self-contained file, inline SVG diagrams)' },
        { value: 'md' as const, name: 'Markdown (Mermaid diagrams)' },
      ],
      default: prefill ?? 'html',
    }),
};

const isDocumentPath = (text: string) => /\.(html|md)$/i.test(text.trim()) || !/\.[a-z0-9]+$/i.test(text.trim());

/** Where the document goes; the default follows the chosen format. */
export const outputQuestion: Question<'output'> = {
  key: 'output',
  title: 'Document path',
  help: 'Relative to the project root. A path without an extension becomes a folder when the document is split.',
  examples: ['docs/idempotency-design.html', 'docs/idempotency-design.md'],
  flags: ['--out'],
  flagExample: '--out docs/idempotency-design.html',
  inspectable: false,
  needsConsent: false,
  fromFlags: (flags) => flags.out?.trim() || undefined,
  fromConfig: (config) => (typeof config['output'] === 'string' && config['output'] !== '' ? config['output'] : undefined),
  // generate swaps the extension to match the format anyway; doing it here keeps the config saying what is written.
  pin: (ctx, value) => value.replace(/\.(html|md)$/i, (ctx.answers.format ?? 'html') === 'md' ? '.md' : '.html'),
  infer: (ctx) => defaultOutput(ctx.answers.format ?? 'html'),
  whenNeeded: () => true,
  fallback: (ctx) => ({ value: defaultOutput(ctx.answers.format ?? 'html') }),
  ask: async (ctx, prefill) => {
    const format = ctx.answers.format ?? 'html';
    // A path remembered from a run with the other format keeps its folder but takes this format's extension.
    const start = (prefill ?? defaultOutput(format)).replace(/\.(html|md)$/i, format === 'md' ? '.md' : '.html');
    const answer = await ctx.prompter.input({
      id: 'output',
      message: 'Where should the document go?',
      default: start,
      validate: (text) => {
        const trimmed = text.trim();
        if (trimmed === '') return 'Enter a path relative to the project root, e.g. docs/idempotency-design.html.';
        if (trimmed.startsWith('/') || trimmed.split(/[\\/]/).includes('..')) return 'Keep the document inside the project (a relative path without "..").';
        if (!isDocumentPath(trimmed)) return 'Use a .html or .md file name (or a folder name without extension).';
        return true;
      },
    });
    return answer.trim();
  },
};
