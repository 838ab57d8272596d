#!/usr/bin/env node
// The flagprof command line. The bundle is built by `npm ci` (prepare) or `npm run build`.
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const bundle = path.join(__dirname, '..', 'dist', 'cli.js');
if (!fs.existsSync(bundle)) {
  process.stderr.write(`flagprof: ${bundle} is missing; run \`npm run build\` first\n`);
  process.exit(2);
}
require(bundle);
