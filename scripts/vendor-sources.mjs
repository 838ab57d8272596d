// Prints the sources of every vendor folder (native/vendors/<key>/) for the build: `decode` gives each vendor's
// decoder (the tracer library), `binding` each capture binding (the agent). A vendor added to the table is built
// by having its folder and its row; nothing lists vendors by hand.
import fs from 'node:fs';
import path from 'node:path';

const part = process.argv[2];
if (part !== 'decode' && part !== 'binding') {
  process.stderr.write('usage: node scripts/vendor-sources.mjs decode|binding\n');
  process.exit(2);
}
const root = path.join(path.dirname(new URL(import.meta.url).pathname), '..');
const vendors = path.join(root, 'native', 'vendors');
// The vendors of the table's compile-time list (FLAGPROF_FOR_EACH_VENDOR in vendors.h): a folder without its row is
// not built, and a row without its folder fails the build in vendors.h, not here.
const table = fs.readFileSync(path.join(vendors, 'vendors.h'), 'utf8');
const list = /#define FLAGPROF_FOR_EACH_VENDOR\(X\)((?:\s*X\(\w+\))+)/.exec(table);
if (!list) {
  process.stderr.write('vendor-sources: native/vendors/vendors.h has no FLAGPROF_FOR_EACH_VENDOR(X) list\n');
  process.exit(1);
}
const keys = [...list[1].matchAll(/X\((\w+)\)/g)].map((m) => m[1]);
const sources = keys
  .map((key) => path.posix.join('native', 'vendors', key, `${part}.cc`))
  .filter((file) => fs.existsSync(path.join(root, file)))
  .sort();
process.stdout.write(sources.join('\n') + '\n');
