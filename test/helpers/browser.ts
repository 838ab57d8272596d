/**
 * Shared by the timeline's browser tests: the webview bundle built from the current sources (in memory), a
 * report made from a real trace, and headless Debian chromium through playwright-core.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import type { WebviewBundle } from '../../extension/timeline/report';
import browserConfig from './chromium.json';

import { ARTIFACTS, ROOT, TRACES } from './paths';

export { ARTIFACTS, ROOT, TRACES };
export const CHROMIUM = browserConfig.executable;
export const CHROMIUM_FLAGS = browserConfig.flags;

export async function buildWebviewBundle(): Promise<WebviewBundle> {
  const result = await build({
    entryPoints: [path.join(ROOT, 'webview/main.ts')],
    bundle: true,
    write: false,
    outdir: path.join(ROOT, 'out/webview-test'),
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
