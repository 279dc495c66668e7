import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UserError } from '../../errors.js';
import { finishSvg, type SvgMeta } from '../finishSvg.js';
import type { DiagramRenderer, OpenRenderer, RendererOptions } from './diagramRenderer.js';

/** The slice of @mermaid-js/mermaid-cli@11 and puppeteer this renderer uses. */
interface MermaidCliModule {
  renderMermaid(browser: unknown, definition: string, format: 'svg', options: Record<string, unknown>): Promise<{ data: Uint8Array }>;
}
interface PuppeteerModule {
  launch(options: Record<string, unknown>): Promise<{ close(): Promise<void> }>;
}
export interface MermaidCliModules {
  cli: MermaidCliModule;
  puppeteer: PuppeteerModule;
}

const INSTALL = 'npm install --save-dev @mermaid-js/mermaid-cli@11';

/**
 * Optional renderer using the official Mermaid CLI in headless Chrome. It is a peer the user
 * installs, never a dependency of this tool (it pulls in a browser), so it is loaded only when
 * asked for, from the user's project first. Output depends on the browser's fonts, so unlike the
 * default renderer it is not byte-identical across machines.
 */
export const openMermaidCli: OpenRenderer = (options) => openMermaidCliWith(options, loadMermaidCli);

export async function openMermaidCliWith(
  options: RendererOptions,
  load: (cwd: string) => Promise<MermaidCliModules>,
): Promise<DiagramRenderer> {
  const { cli, puppeteer } = await load(options.cwd);
  let browser: Awaited<ReturnType<PuppeteerModule['launch']>>;
  try {
    browser = await puppeteer.launch({ headless: 'shell' });
  } catch (error) {
    throw new UserError(
      `The mermaid-cli diagram renderer could not start Chrome: ${firstLine(error)}`,
      'Run `npx puppeteer browsers install chrome-headless-shell` (or set PUPPETEER_EXECUTABLE_PATH), or drop `--diagrams mermaid-cli` to use the built-in renderer.',
    );
  }
  return {
    name: 'mermaid-cli',
    async render(mermaid: string, meta: SvgMeta) {
      const { data } = await cli.renderMermaid(browser, mermaid, 'svg', {
        backgroundColor: 'transparent',
        svgId: `${meta.id}-svg`,
        // Plain SVG text instead of HTML in <foreignObject>; strict keeps labels inert.
        mermaidConfig: { theme: 'neutral', securityLevel: 'strict', htmlLabels: false, flowchart: { htmlLabels: false }, fontFamily: 'system-ui, sans-serif' },
      });
      // Mermaid already scopes its CSS to the svgId it was given.
      return finishSvg(new TextDecoder().decode(data), meta, { scopeCss: false });
    },
    close: () => browser.close(),
  };
}

async function loadMermaidCli(cwd: string): Promise<MermaidCliModules> {
  const cliPath = resolveFrom([join(cwd, 'package.json'), import.meta.url], '@mermaid-js/mermaid-cli');
  if (cliPath === undefined) {
    throw new UserError('The mermaid-cli diagram renderer needs @mermaid-js/mermaid-cli@11, which is not installed.', `${INSTALL} (or drop \`--diagrams mermaid-cli\` to use the built-in renderer).`);
  }
  const cli = (await import(pathToFileURL(cliPath).href)) as Partial<MermaidCliModule>;
  // puppeteer is mermaid-cli's own dependency; resolve it from there so versions match.
  const puppeteerPath = resolveFrom([cliPath], 'puppeteer');
  const puppeteer = puppeteerPath === undefined ? undefined : ((await import(pathToFileURL(puppeteerPath).href)) as { default?: PuppeteerModule }).default;
  if (typeof cli.renderMermaid !== 'function' || puppeteer === undefined || typeof puppeteer.launch !== 'function') {
    throw new UserError('The installed @mermaid-js/mermaid-cli does not provide the version 11 API (renderMermaid and puppeteer).', INSTALL);
  }
  return { cli: cli as MermaidCliModule, puppeteer };
}

function resolveFrom(bases: string[], specifier: string): string | undefined {
  for (const base of bases) {
    try {
      return createRequire(base).resolve(specifier);
    } catch {
      // try the next base
    }
  }
  return undefined;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}
