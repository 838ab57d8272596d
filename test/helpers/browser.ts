/**
 * Shared by the timeline's browser tests: the webview bundle built from the current sources (in memory), a
 * report made from a real trace, and headless Debian chromium through playwright-core.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { WebviewBundle } from '../../extension/timeline/report';
import browserConfig from './chromium.json';

import { ARTIFACTS, ROOT, TRACES } from './paths';

export { ARTIFACTS, ROOT, TRACES };
export const CHROMIUM = browserConfig.executable;
export const CHROMIUM_FLAGS = browserConfig.flags;

/** A webview's bundle (the timeline's by default; 'webview/bringup/main.ts', 'webview/results/main.ts'). */
export async function buildWebviewBundle(entry = 'webview/main.ts'): Promise<WebviewBundle> {
  const result = await build({
    entryPoints: [path.join(ROOT, entry)],
    bundle: true,
    write: false,
    outdir: path.join(ROOT, 'out', `${path.basename(path.dirname(entry))}-test`),
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    logLevel: 'silent',
  });
  const script = result.outputFiles.find((f) => f.path.endsWith('.js'));
  const style = result.outputFiles.find((f) => f.path.endsWith('.css'));
  if (!script) throw new Error('esbuild produced no webview script');
  return { script: script.text, style: style?.text ?? '' };
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: run scripts/install-browser.sh (Debian chromium and fonts)`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}

/**
 * A page that runs a webview bundle as VS Code would: the theme's variables, the bundle's style, a #root, and
 * acquireVsCodeApi whose messages are recorded in window.posted for the test to read.
 */
export async function openWebviewPage(
  browser: Browser,
  bundle: WebviewBundle,
  options: { theme: string; viewport: { width: number; height: number } },
): Promise<Page> {
  const page = await browser.newPage({ viewport: options.viewport });
  page.on('pageerror', (e) => console.error('pageerror', e.message));
  page.on('console', (m) => console.error('console', m.text()));
  await page.setContent(
    `<!DOCTYPE html><html><head><style>${options.theme}</style><style>${bundle.style}</style></head><body><div id="root"></div></body></html>`,
  );
  await page.addScriptTag({
    content: `window.posted = []; let state; window.acquireVsCodeApi = () => ({ postMessage: (m) => window.posted.push(m), getState: () => state, setState: (s) => { state = s; } });`,
  });
  await page.addScriptTag({ content: bundle.script });
  return page;
}
