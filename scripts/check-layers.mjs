#!/usr/bin/env node
/**
 * The import-boundary check (run by `npm run lint`): every import of the product's sources goes from a layer to a
 * layer it may depend on, as the README's Layout section states. The table below is that statement; a violation
 * prints `file:line: <layer> imports <target> (<layer> may import only …)` and the check exits 1.
 *
 * Usage: node scripts/check-layers.mjs [--root DIR]
 */
import fs from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import ts from 'typescript';

/** Which folder (or file) is which layer: the first matching prefix wins, so files before their folders. */
const LAYERS = [
  ['extension/protocol.ts', 'protocol'],
  ['extension/bringup/protocol.ts', 'protocol'],
  ['extension/results/protocol.ts', 'protocol'],
  ['extension/extension.ts', 'vscode'],
  ['extension/cli.ts', 'cli'],
  ['extension/shared/', 'shared'],
  ['extension/model/', 'model'],
  ['extension/import/', 'import'],
  ['extension/analysis/', 'analysis'],
  ['extension/capture/', 'capture'],
  ['extension/bringup/', 'bringup'],
  ['extension/timeline/', 'timeline'],
  ['extension/cli/', 'cli'],
  ['extension/vscode/', 'vscode'],
  ['webview/', 'webview'],
];

const HOST = ['shared', 'protocol', 'model', 'import', 'analysis', 'capture', 'bringup', 'timeline'];

/**
 * layer → the layers it may import, and the packages it may import ('node:' stands for Node's built-ins). The
 * webview and everything it bundles (shared, protocol) run in a browser: no Node, no host code. Only the vscode
 * layer touches the 'vscode' API; the host does not import the command line (its errors and output are the CLI's).
 */
export const ALLOWED = {
  shared: { layers: ['shared'], packages: [] },
  protocol: { layers: ['shared', 'protocol'], packages: [] },
  webview: { layers: ['webview', 'protocol', 'shared'], packages: ['@vscode-elements/elements'] },
  model: { layers: ['model', 'shared'], packages: ['node:'] },
  import: { layers: ['import', 'model', 'shared'], packages: ['node:'] },
  analysis: { layers: ['analysis', 'import', 'model', 'shared'], packages: ['node:'] },
  capture: { layers: ['capture', 'analysis', 'import', 'model', 'shared'], packages: ['node:'] },
  bringup: {
    layers: ['bringup', 'capture', 'analysis', 'import', 'model', 'shared', 'protocol'],
    packages: ['node:'],
  },
  timeline: {
    layers: ['timeline', 'analysis', 'import', 'model', 'shared', 'protocol'],
    packages: ['node:'],
  },
  cli: { layers: ['cli', ...HOST], packages: ['node:'] },
  vscode: { layers: ['vscode', ...HOST], packages: ['node:', 'vscode', '@vscode/python-extension'] },
};

function layerOf(rel) {
  for (const [prefix, layer] of LAYERS) if (rel === prefix || rel.startsWith(prefix)) return layer;
  return undefined;
}

function* sources(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(p);
    else if (/\.(ts|mts|mjs|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) yield p;
  }
}

const BUILTINS = new Set(builtinModules);

function packageName(spec) {
  if (spec.startsWith('node:') || BUILTINS.has(spec.split('/')[0])) return 'node:';
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Every violation under root, as `file:line: message` strings (paths relative to root). */
export function checkLayers(root) {
  const violations = [];
  for (const top of ['extension', 'webview']) {
    for (const file of sources(path.join(root, top))) {
      const rel = path.relative(root, file).split(path.sep).join('/');
      const layer = layerOf(rel);
      if (!layer) continue;
      const allowed = ALLOWED[layer];
      const text = fs.readFileSync(file, 'utf8');
      const info = ts.preProcessFile(text, true, true);
      for (const ref of info.importedFiles) {
        const spec = ref.fileName;
        const line = text.slice(0, ref.pos).split('\n').length;
        const where = `${rel}:${line}`;
        if (spec.startsWith('.')) {
          if (/\.(css|svg|png)$/.test(spec)) continue;
          const target = path
            .relative(root, path.resolve(path.dirname(file), spec))
            .split(path.sep)
            .join('/');
          const resolved =
            [`${target}.ts`, `${target}/index.ts`, target].find((t) => fs.existsSync(path.join(root, t))) ??
            target;
          const targetLayer = layerOf(resolved);
          if (!targetLayer) {
            violations.push(`${where}: ${layer} imports ${spec}, outside the product's sources`);
          } else if (!allowed.layers.includes(targetLayer)) {
            violations.push(
              `${where}: ${layer} imports ${targetLayer} (${spec}); ${layer} may import only ${allowed.layers.join(', ')}`,
            );
          }
        } else {
          const pkg = packageName(spec);
          if (!allowed.packages.includes(pkg)) {
            const may = allowed.packages.length ? allowed.packages.join(', ') : 'no packages';
            violations.push(`${where}: ${layer} imports the package ${spec}; ${layer} may import ${may}`);
          }
        }
      }
    }
  }
  return violations;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { root: { type: 'string' } } });
  const root = path.resolve(values.root ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
  const violations = checkLayers(root);
  for (const v of violations) console.error(v);
  if (violations.length) {
    console.error(
      `check-layers: ${violations.length} import${violations.length === 1 ? '' : 's'} across a layer boundary (the table is in scripts/check-layers.mjs; the rules in README.md, Layout)`,
    );
    process.exit(1);
  }
  console.log("check-layers: every import stays within its layer's allowed dependencies");
}
