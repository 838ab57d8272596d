/**
 * The step runner the end-to-end suites share: timed PASS/FAIL lines, numbered screenshots, a screenshot on each
 * failure, results.json, and the exit code.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import * as path from 'node:path';
import { freePort, prepare, start, stop, waitHealthy } from './codeServer.mjs';
import { launch } from './workbench.mjs';

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

/**
 * The scaffolding of a suite: a clean artifacts folder, a scratch folder (`state` for code-server inside it), a
 * watchdog that ends the run past `timeoutS`, and `finish()` for the suite's `finally`: the browser and
 * code-server stopped, their logs kept with the artifacts, results.json written, the scratch folder removed and
 * the exit code set. `openWorkbench()` installs the VSIX, starts code-server and opens Chromium; what it started is
 * stopped by the watchdog and by `finish()`.
 */
export function startSuite(steps, { root, artifacts, name, timeoutS }) {
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });
  const scratch = mkdtempSync(path.join(os.tmpdir(), `flagos-e2e-${name}-`));
  const state = path.join(scratch, 'state');
  const { results, log } = steps;
  // What the suite has started, for the watchdog and finish().
  const running = { codeServer: undefined, context: undefined };
  const watchdog = setTimeout(async () => {
    log(`FAIL the suite ran past ${timeoutS} s; stopping`);
    results.push({ step: 'time limit', ok: false, detail: `over ${timeoutS} s` });
    const { codeServer, context } = running;
    await context?.close().catch(() => {});
    await stop(codeServer);
    steps.writeResults();
    process.exit(1);
  }, timeoutS * 1000);

  async function finish() {
    clearTimeout(watchdog);
    const { codeServer, context } = running;
    await context?.close().catch(() => {});
    await stop(codeServer);
    if (existsSync(path.join(state, 'code-server.log')))
      cpSync(path.join(state, 'code-server.log'), path.join(artifacts, 'code-server.log'));
    // The extension host's own log says why an editor did not resolve.
    const hostLogs = path.join(state, 'user-data', 'logs');
    if (existsSync(hostLogs)) cpSync(hostLogs, path.join(artifacts, 'logs'), { recursive: true });
    steps.writeResults();
    rmSync(scratch, { recursive: true, force: true });
    const passed = results.filter((r) => r.ok).length;
    log(`${passed}/${results.length} steps passed; artifacts in ${path.relative(root, artifacts)}/`);
    if (results.some((r) => !r.ok)) process.exitCode = 1;
  }

  /**
   * The VSIX installed into code-server with `settings`, code-server started on a free port with `workspace`
   * open, Chromium launched: resolves to {page, context, port} (the page not yet navigated). `assertInstalled`
   * judges the install output (a suite may state its own check).
   */
  async function openWorkbench({ vsix, workspace, settings = {}, assertInstalled }) {
    let common;
    await steps.step('install the VSIX into code-server', () => {
      const prepared = prepare({ root, state, vsix, settings });
      common = prepared.common;
      if (assertInstalled) assertInstalled(prepared.installOutput);
      else if (!/successfully installed/i.test(prepared.installOutput))
        throw new Error(prepared.installOutput);
      return prepared.installOutput.split('\n').pop();
    });
    const port = await freePort();
    await steps.step('start code-server', async () => {
      running.codeServer = start({ root, state, common, port, folder: workspace });
      await waitHealthy(port, 60_000);
      return `http://127.0.0.1:${port}`;
    });
    const context = await launch(path.join(scratch, 'chromium'));
    running.context = context;
    const page = context.pages()[0] ?? (await context.newPage());
    steps.setPage(page);
    page.on('pageerror', (e) => log(`  [pageerror] ${e.message.slice(0, 200)}`));
    return { page, context, port };
  }

  return { scratch, state, finish, openWorkbench };
}
