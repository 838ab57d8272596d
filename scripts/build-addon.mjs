// Builds the native addon and the capture agent (binding.gyp) with node-gyp, against the headers of the
// Node that runs this script when they are installed beside it, so nothing is downloaded.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const nodeGyp = require.resolve('node-gyp/bin/node-gyp.js');
const prefix = path.resolve(path.dirname(process.execPath), '..');
const args = [nodeGyp, 'rebuild', '--jobs', 'max'];
if (!process.env.npm_config_nodedir && existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) {
  args.push(`--nodedir=${prefix}`);
}
const result = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(result.status ?? 1);
