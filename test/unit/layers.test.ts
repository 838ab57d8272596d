import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without type declarations
import { checkLayers } from '../../scripts/check-layers.mjs';
import { ROOT } from '../helpers/traces';

const SCRIPT = path.join(ROOT, 'scripts', 'check-layers.mjs');
const planted = fs.mkdtempSync(path.join(os.tmpdir(), 'flagprof-layers-'));
afterAll(() => fs.rmSync(planted, { recursive: true, force: true }));

function plant(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(planted, 'tree-'));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

describe('the import-boundary check', () => {
  it('finds no import across a layer boundary in the product', () => {
    expect(checkLayers(ROOT)).toEqual([]);
  });

  it('fails on a planted violation of each kind of rule, naming the file, the line and the rule', () => {
    const root = plant({
      'extension/model/profile.ts': "export const x = 1;\nimport * as vscode from 'vscode';\n",
      'extension/import/kineto.ts': "import { y } from '../analysis/analyze';\n",
      'extension/analysis/analyze.ts': 'export const y = 2;\n',
      'extension/vscode/timeline.ts': "import { loadProfileArgument } from '../cli/summary';\n",
      'extension/cli/summary.ts': 'export const loadProfileArgument = 0;\n',
      'webview/main.ts':
        "import type { OpStat } from '../extension/analysis/types';\nimport * as fs from 'node:fs';\n",
      'extension/analysis/types.ts': 'export interface OpStat { name: string }\n',
      'extension/shared/format.ts': "import { x } from '../model/profile';\n",
    });
    const violations: string[] = checkLayers(root);
    expect(violations).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^extension\/model\/profile\.ts:2: model imports the package vscode/),
        expect.stringMatching(/^extension\/import\/kineto\.ts:1: import imports analysis/),
        expect.stringMatching(/^extension\/vscode\/timeline\.ts:1: vscode imports cli/),
        expect.stringMatching(
          /^webview\/main\.ts:1: webview imports analysis .*may import only webview, protocol, shared/,
        ),
        expect.stringMatching(/^webview\/main\.ts:2: webview imports the package node:fs/),
        expect.stringMatching(/^extension\/shared\/format\.ts:1: shared imports model/),
      ]),
    );
    expect(violations).toHaveLength(6);

    const run = spawnSync(process.execPath, [SCRIPT, '--root', root], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('check-layers: 6 imports across a layer boundary');
  });

  it('passes a tree whose imports all go where they may', () => {
    const root = plant({
      'extension/shared/format.ts': 'export const f = 1;\n',
      'extension/model/profile.ts': "import { f } from '../shared/format';\nimport * as fs from 'node:fs';\n",
      'extension/vscode/timeline.ts':
        "import * as vscode from 'vscode';\nimport { f } from '../shared/format';\n",
      'webview/main.ts': "import './timeline.css';\nimport type { X } from '../extension/protocol';\n",
      'extension/protocol.ts': "import type { f } from './shared/format';\n",
    });
    expect(checkLayers(root)).toEqual([]);
    const run = spawnSync(process.execPath, [SCRIPT, '--root', root], { encoding: 'utf8' });
    expect(run.status).toBe(0);
  });
});
