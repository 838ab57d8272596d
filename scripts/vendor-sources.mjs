// Prints the sources of every vendor folder (native/vendors/<key>/) for the build: `decode` gives each vendor's
// decoder (the tracer library), `binding` each capture binding (the agent). A vendor added to the table is built
// by having its folder; nothing lists vendors by hand.
import fs from 'node:fs';
import path from 'node:path';

const part = process.argv[2];
if (part !== 'decode' && part !== 'binding') {
  process.stderr.write('usage: node scripts/vendor-sources.mjs decode|binding\n');
  process.exit(2);
}
const root = path.join(path.dirname(new URL(import.meta.url).pathname), '..');
const vendors = path.join(root, 'native', 'vendors');
const sources = fs
  .readdirSync(vendors, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => path.posix.join('native', 'vendors', entry.name, `${part}.cc`))
  .filter((file) => fs.existsSync(path.join(root, file)))
  .sort();
process.stdout.write(sources.join('\n') + '\n');
