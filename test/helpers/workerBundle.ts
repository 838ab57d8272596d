/** A worker's bundle built from the sources under test, as scripts/build.mjs builds dist/*Worker.js. */
import path from 'node:path';
import { build } from 'esbuild';
import { ROOT } from './paths';

/** Bundles `entry` (relative to the project root) to `outfile`; returns outfile. */
export async function bundleWorker(entry: string, outfile: string): Promise<string> {
  await build({
    entryPoints: [path.join(ROOT, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    logLevel: 'silent',
  });
  return outfile;
}
