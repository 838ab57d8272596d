// Bundles the extension host (node, cjs, 'vscode' external), the flagprof CLI and the webview.
// Type checking is a separate `tsc --noEmit` (npm run typecheck): esbuild only strips types.
import { build } from 'esbuild';
import { existsSync, readFileSync } from 'node:fs';

const production = process.argv.includes('--production');
const version = JSON.parse(readFileSync("package.json", "utf8")).version;
const common = {
  define: { PRODUCT_VERSION: JSON.stringify(version) },
  bundle: true,
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  legalComments: 'none',
};

const builds = [
  build({
    ...common,
    entryPoints: ['extension/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  }),
  // The read worker (extension/timeline/readOffThread.ts starts it beside the extension's bundle).
  build({
    ...common,
    entryPoints: ['extension/timeline/readWorker.ts'],
    outfile: 'dist/readWorker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  }),
  // The analysis worker (extension/analysis/offThread.ts starts it beside the extension's bundle).
  build({
    ...common,
    entryPoints: ['extension/analysis/worker.ts'],
    outfile: 'dist/analysisWorker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  }),
  build({
    ...common,
    entryPoints: ['extension/cli.ts'],
    outfile: 'dist/cli.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  }),
];
if (existsSync('webview/main.ts')) {
  builds.push(
    build({
      ...common,
      entryPoints: ['webview/main.ts'],
      outfile: 'dist/webview.js',
      platform: 'browser',
      format: 'iife',
      target: 'es2022',
    }),
  );
}
if (existsSync('webview/bringup/main.ts')) {
  // The bring-up view: its own bundle (and bringup.css from its CSS import).
  builds.push(
    build({ ...common, entryPoints: ['webview/bringup/main.ts'], outfile: 'dist/bringup.js', platform: 'browser', format: 'iife', target: 'es2022' }),
  );
}
if (existsSync('webview/results/main.ts')) {
  // The Results view: its own bundle (and results.css from its CSS import).
  builds.push(
    build({ ...common, entryPoints: ['webview/results/main.ts'], outfile: 'dist/results.js', platform: 'browser', format: 'iife', target: 'es2022' }),
  );
}
await Promise.all(builds);
