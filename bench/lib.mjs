// What every benchmark starts with: the project's folders, the sources bundled for Node on the fly (so a bench
// measures the checkout as it is, without a build step), and the headless Chromium the UI benches drive.
import { build } from 'esbuild';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '..');
export const out = path.join(here, 'out');
export const traces = path.resolve(root, '..', 'shared', 'traces');
mkdirSync(out, { recursive: true });

const require = createRequire(import.meta.url);
/** Debian chromium and the flags every headless run here uses (shared with the browser tests and e2e suites). */
export const chromium = require('../test/helpers/chromium.json');

/**
 * Bundles TypeScript for Node and loads it. `source` is either a file (bench/x.ts) or the text of an entry module
 * (`export { analyze } from './extension/analysis/analyze'`, resolved from the project root); `name` names the
 * bundle in bench/out.
 */
export async function loadBundle(name, source) {
  const outfile = path.join(out, `${name}.cjs`);
  const entry = source.endsWith('.ts')
    ? { entryPoints: [path.resolve(root, source)] }
    : { stdin: { contents: source, resolveDir: root, loader: 'ts' } };
  await build({
    ...entry,
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  return require(outfile);
}
