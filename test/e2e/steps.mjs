/**
 * The step runner the end-to-end suites share: timed PASS/FAIL lines, numbered screenshots, a screenshot on each
 * failure, results.json, and the exit code.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

export function createSteps(root, artifacts) {
  const t0 = Date.now();
  const results = [];
  let page;
  let shot = 0;
  const log = (message) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${message}`);

  async function screenshot(name) {
    if (!page) return;
    const file = path.join(artifacts, `${String(++shot).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path: file }).catch(() => {});
    log(`  screenshot ${path.relative(root, file)}`);
  }

  async function step(name, body) {
    const started = Date.now();
    try {
      const detail = await body();
      results.push({ step: name, ok: true, seconds: (Date.now() - started) / 1000, detail });
      log(`PASS ${name}${detail ? ` — ${detail}` : ''}`);
    } catch (error) {
      const lines = error instanceof Error ? error.message.split('\n') : [String(error)];
      const message = lines.slice(0, 4).join(' | ');
      results.push({ step: name, ok: false, seconds: (Date.now() - started) / 1000, detail: message });
      log(`FAIL ${name} — ${message}`);
      if (lines.length > 4) console.log(lines.slice(0, 12).join('\n'));
      await screenshot(`failed-${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`);
      throw error;
    }
  }

  /** The palette title of a contributed command, as a user sees it ("Category: Title"). */
  function commandTitle(id) {
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
    const command = manifest.contributes.commands.find((c) => c.command === id);
    if (!command) throw new Error(`package.json contributes no command ${id}`);
    return command.category ? `${command.category}: ${command.title}` : command.title;
  }

  /** The step every suite starts with: code-server, Node 24 and chromium (quick when installed). */
  function installTools() {
    return step('install code-server, Node 24 and chromium', () => {
      execFileSync('bash', [path.join(root, 'scripts', 'install-e2e.sh')], {
        stdio: 'inherit',
        timeout: 600_000,
      });
    });
  }

  /** Packages the VSIX (checking it holds `requiredFiles`); resolves to its path. */
  async function packageVsix(requiredFiles = []) {
    let vsix;
    await step('package the VSIX', () => {
      const output = execFileSync(process.execPath, [path.join(root, 'scripts', 'package.mjs')], {
        cwd: root,
        encoding: 'utf8',
      });
      const match = /^(out\/\S+\.vsix): (\d+) KiB/m.exec(output);
      if (!match) throw new Error('scripts/package.mjs did not name the VSIX it made');
      for (const file of requiredFiles) if (!output.includes(file)) throw new Error(`the VSIX lacks ${file}`);
      vsix = path.join(root, match[1]);
      return `${match[1]}, ${match[2]} KiB`;
    });
    return vsix;
  }

  function writeResults() {
    writeFileSync(path.join(artifacts, 'results.json'), JSON.stringify(results, null, 2));
  }

  return {
    results,
    log,
    screenshot,
    step,
    commandTitle,
    installTools,
    packageVsix,
    writeResults,
    setPage(next) {
      page = next;
    },
  };
}
