// Builds a platform-specific VSIX with @vscode/vsce from a production build, lists what went in and checks the
// size budget. Usage: node scripts/package.mjs [--target linux-x64] [--out FILE] [--budget-mb 5]
//
// What goes in is what .vscodeignore names with "!" lines. Those files are copied to a staging folder first and
// vsce packages that folder: vsce itself walks the whole tree before ignoring (the Python venv and the
// code-server install of the end-to-end tests are gigabytes), which takes minutes.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { listZip } from './zip-list.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    target: {
      type: 'string',
      default: `${process.platform === 'win32' ? 'win32' : process.platform}-${process.arch}`,
    },
    out: { type: 'string' },
    'budget-mb': { type: 'string', default: '5' },
  },
});
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const out = path.resolve(
  root,
  values.out ?? `out/${manifest.name}-${manifest.version}-${values.target}.vsix`,
);
mkdirSync(path.dirname(out), { recursive: true });

const run = (file, args, cwd = root) => execFileSync(file, args, { cwd, stdio: 'inherit' });
run(process.execPath, ['scripts/build.mjs', '--production']);

/** A .vscodeignore glob as a regular expression over paths relative to the root. */
function globRegExp(glob) {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      re += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

function walk(dir, base, found) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const relative = path.relative(base, full).split(path.sep).join('/');
    if (entry.isDirectory()) {
      if (entry.name !== '__pycache__' && entry.name !== 'node_modules') walk(full, base, found);
    } else if (entry.isFile()) found.push(relative);
  }
}

const includes = readFileSync(path.join(root, '.vscodeignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line.startsWith('!'))
  .map((line) => line.slice(1));
const stage = path.join(root, 'out', 'vsix-stage');
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
const staged = new Set();
for (const glob of includes) {
  // Walk only the folder before the first wildcard.
  const fixed = glob.split('/').filter((_, i, parts) => !parts.slice(0, i + 1).some((p) => /[*?]/.test(p)));
  const files = [];
  const start = path.join(root, ...fixed);
  if (existsSync(start) && statSync(start).isFile()) files.push(fixed.join('/'));
  else walk(start, root, files);
  const re = globRegExp(glob);
  for (const file of files) if (re.test(file)) staged.add(file);
}
for (const file of staged) cpSync(path.join(root, file), path.join(stage, file));
if (![...staged].some((f) => f.endsWith('.node')))
  console.log(
    'package: no native binaries in build/Release (run npm run build:native): the VSIX is packaged without them',
  );
cpSync(path.join(root, '.vscodeignore'), path.join(stage, '.vscodeignore'));

const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
const args = [
  'package',
  '--no-dependencies',
  '--target',
  values.target,
  '--out',
  out,
  '--allow-missing-repository',
];
if (!['LICENSE', 'LICENSE.md', 'LICENSE.txt'].some((f) => existsSync(path.join(root, f))))
  args.push('--skip-license');
run(process.execPath, [vsce, ...args], stage);

const entries = listZip(readFileSync(out));
const size = statSync(out).size;
const budget = Number(values['budget-mb']) * 1024 * 1024;
console.log(
  `\n${path.relative(root, out)}: ${(size / 1024).toFixed(0)} KiB compressed, ${entries.length} files:`,
);
for (const e of entries) console.log(`  ${String(e.size).padStart(9)}  ${e.name}`);
const unexpected = entries.filter((e) =>
  /(^|\/)(node_modules|test|bench|\.venv|\.tools|extension\/[^/]+\.ts)(\/|$)|\.map$|\.ts$/.test(e.name),
);
if (unexpected.length > 0) {
  console.error(
    `package: files that do not run got into the VSIX: ${unexpected.map((e) => e.name).join(', ')}`,
  );
  process.exit(1);
}
if (size > budget) {
  console.error(`package: ${(size / 1048576).toFixed(2)} MB is over the ${values['budget-mb']} MB budget`);
  process.exit(1);
}
console.log(`package: ${(size / 1048576).toFixed(2)} MB of the ${values['budget-mb']} MB budget`);
