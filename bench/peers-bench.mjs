// npm run bench:peers — first frame against Chrome DevTools' Performance panel, measured in the same run.
//
// Per trace, interleaved, BENCH_RUNS times (median shown):
// - DevTools: Debian chromium's own DevTools frontend (devtools://devtools/bundled/trace_app.html), its
//   Performance panel given the file through "Load profile…" (Ctrl+O, the file chooser), timed from handing it the
//   file until the panel shows the loaded trace (its Bottom-up tab and a frame after it).
// - ours: `flagprof report TRACE --out FILE.html` started, then the HTML opened in the same browser, until its
//   first frame (the status line's "First frame in …"): what a user of the command line waits for, from the command.
// - the editor: the trace opened with Quick Open in a real VS Code (code-server with the packaged VSIX, the e2e
//   suites' harness), timed from the pick until the timeline's first frame (its toolbar), and until the whole trace
//   is shown and linked (its status line's "First frame in" or "Whole trace in", its analysis in); a large
//   trace's first frame is the slices read so far. Each open is closed before the next. BENCH_PEERS_EDITOR=0 leaves the editor out.
// - the command line: `flagprof summary TRACE`, from its start to its exit, after each editor open.
// Prints one line per trace: `first-frame <file> ours <ms> devtools <ms> ratio <x>` (ours / DevTools; target
// <= 0.5), and with the editor `first-frame-editor <file> editor <ms> whole <ms> devtools <ms> ratio <x> cli <ms>
// editor/cli <x>` (the editor's first frame against the command line's summary of the same file; target <= 1.2),
// then `editor-account <file> <the median open's status line>`: where its time went, as the page accounts for it.
// BENCH_PEERS_TRACES (comma-separated paths) replaces the default traces: owlv2 (56 MB) and MTIA (87 MB).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { createSteps, startSuite } from '../test/e2e/steps.mjs';
import { quickOpen, runCommand, webviewFrame } from '../test/e2e/workbench.mjs';
import { chromium } from 'playwright-core';
/* global requestAnimationFrame, window */

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const out = path.join(here, 'out');
mkdirSync(out, { recursive: true });
const runs = Number(process.env.BENCH_RUNS ?? 3);
// The browser and flags every browser test here uses.
const { executable, flags } = JSON.parse(
  readFileSync(path.join(root, 'test', 'helpers', 'chromium.json'), 'utf8'),
);

/** DevTools reads plain JSON through its file chooser: each trace decompressed to bench/out once. */
function plain(file) {
  if (!file.endsWith('.gz')) return file;
  const target = path.join(out, path.basename(file).replace(/\.gz$/, ''));
  if (!existsSync(target)) writeFileSync(target, gunzipSync(readFileSync(file)));
  return target;
}

const traces = (
  process.env.BENCH_PEERS_TRACES?.split(',') ?? [
    path.resolve(root, '..', 'shared', 'traces', 'tracelens_h100_owlv2_large.trace.json.gz'),
    path.resolve(root, '..', 'shared', 'traces', 'hta_mtia_train_rank0_large.trace.json.gz'),
  ]
).map((file) => plain(path.resolve(file)));

async function devtools(browser, file) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  try {
    await page.goto('devtools://devtools/bundled/trace_app.html', { timeout: 30_000 });
    // The frontend opens on its Sources panel with a "connection closed" notice (it has no page to debug).
    const performanceTab = page.getByText('Performance', { exact: true }).first();
    await performanceTab.waitFor({ timeout: 30_000 });
    // Its notice is a modal: once it is up, Escape closes it (it comes a moment after the panel's tabs).
    const notice = page.getByText('Debugging connection was closed').first();
    if (
      await notice.waitFor({ timeout: 10_000 }).then(
        () => true,
        () => false,
      )
    ) {
      for (let i = 0; i < 10 && (await notice.isVisible().catch(() => false)); i++) {
        await page.keyboard.press('Escape');
        await page.waitForTimeout(200);
      }
    }
    await performanceTab.click({ timeout: 30_000 });
    await page.waitForTimeout(500);
    // "Load profile…": its toolbar button, or Ctrl+O where the button is not found; tried again if no chooser came.
    let picker;
    for (let attempt = 0; !picker && attempt < 4; attempt++) {
      const chooser = page.waitForEvent('filechooser', { timeout: 5_000 }).catch(() => undefined);
      const button = page.getByRole('button', { name: /^Load (profile|trace)/i }).first();
      if (attempt % 2 === 0 && (await button.isVisible().catch(() => false))) await button.click();
      else await page.keyboard.press('Control+o');
      picker = await chooser;
    }
    if (!picker) throw new Error('DevTools offered no file chooser for "Load profile…"');
    const started = Date.now();
    await picker.setFiles(file);
    await page
      .getByText('Bottom-up', { exact: true })
      .first()
      .waitFor({ state: 'visible', timeout: 600_000 });
    await page.evaluate(
      () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
    );
    const ms = Date.now() - started;
    await page.screenshot({ path: path.join(out, `peers-devtools-${path.basename(file, '.json')}.png`) });
    return ms;
  } finally {
    await page.close();
  }
}

async function ours(browser, file) {
  const report = path.join(out, `peers-${path.basename(file, '.json')}.html`);
  // The tab exists before the clock starts, as DevTools' does.
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const started = Date.now();
  execFileSync(process.execPath, [path.join(root, 'bin', 'flagprof.js'), 'report', file, '--out', report], {
    stdio: 'ignore',
  });
  try {
    await page.goto(pathToFileURL(report).href, { timeout: 600_000, waitUntil: 'commit' });
    const status = page.locator('.status', { hasText: /First frame in/ });
    await status.first().waitFor({ timeout: 600_000 });
    const ms = Date.now() - started;
    await page.screenshot({ path: path.join(out, `peers-ours-${path.basename(file, '.json')}.png`) });
    return ms;
  } finally {
    await page.close();
  }
}

/** The name a trace has in the editor's workspace: *.pt.trace.json, which the timeline editor claims. */
const editorName = (file) =>
  `${path.basename(file).replace(/(\.pt)?\.trace\.json$|\.json$/, '')}.pt.trace.json`;

/** code-server with the VSIX and a workspace of the traces (links), its workbench open; undefined when left out. */
async function startEditor() {
  if (process.env.BENCH_PEERS_EDITOR === '0') return undefined;
  const artifacts = path.join(out, 'peers-editor');
  const steps = createSteps(root, artifacts);
  const suite = startSuite(steps, { root, artifacts, name: 'peers', timeoutS: 3600 });
  try {
    await steps.installTools();
    const vsix = await steps.packageVsix();
    const workspace = path.join(suite.scratch, 'traces');
    mkdirSync(workspace, { recursive: true });
    for (const file of traces) symlinkSync(file, path.join(workspace, editorName(file)));
    const { page, port } = await suite.openWorkbench({ vsix, workspace });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    await page
      .locator('.explorer-folders-view .monaco-list-row', { hasText: editorName(traces[0]) })
      .first()
      .waitFor({ timeout: 90_000 });
    // A first open, not measured: the extension activates and the workbench learns of its editor.
    await editor(page, traces[0], true);
    return { page, suite };
  } catch (error) {
    await suite.finish();
    throw error;
  }
}

/**
 * One open in the editor: the times from the pick to the first frame and to the whole trace, as the page stamped
 * them when it showed them (window.flagprofStatusTimes): waiting for them polls slowly, so that the measurement
 * takes no CPU from the open it measures (a poll every 25 ms cost 0.2 s of CPU over a 1 s open).
 */
async function editor(page, file, warmUp = false) {
  const name = editorName(file);
  const started = await quickOpen(page, name);
  const frame = webviewFrame(page);
  // Whole: drawn and linked (the editor draws a trace before its analysis, then says "… · linked at …").
  const wholeText = /^(First frame|Whole trace) in (?!.*· linking kernels)/;
  const whole = frame.locator('.status', { hasText: wholeText });
  while (!(await whole.isVisible().catch(() => false))) {
    if (Date.now() - started > 600_000) throw new Error(`${name} did not open in the editor within 600 s`);
    // A trace opened before the workbench knew the editor shows as text: closed, and opened again.
    if (warmUp && Date.now() - started > 20_000) {
      await runCommand(page, 'View: Close All Editors');
      return editor(page, file, true);
    }
    await page.waitForTimeout(250);
  }
  const { log, times } = await frame
    .locator('body')
    .evaluate(() => ({ log: window.flagprofStatusLog ?? [], times: window.flagprofStatusTimes ?? [] }));
  const shown = (pattern) => {
    const k = log.findIndex((text) => pattern.test(text));
    return k < 0 ? undefined : times[k] - started;
  };
  const wholeMs = shown(wholeText);
  const firstMs = shown(/^(First frame|Whole trace) in |% of the trace read · the rest opening…$/);
  // The page's own account of the open: where the time went (read, payload and page, transfer, drawing).
  const account = log.find((text) => /^(First frame|Whole trace) in /.test(text))?.split(' · link')[0];
  if (!warmUp)
    await page.screenshot({ path: path.join(out, `peers-editor-${path.basename(file, '.json')}.png`) });
  await runCommand(page, 'View: Close All Editors');
  await page.locator('.tabs-container .tab').first().waitFor({ state: 'detached', timeout: 30_000 });
  return { firstMs, wholeMs, account };
}

/** `flagprof summary FILE` from its start to its exit: the command line's import of the trace (and its tables). */
function cli(file) {
  const started = Date.now();
  execFileSync(process.execPath, [path.join(root, 'bin', 'flagprof.js'), 'summary', file], { stdio: 'ignore' });
  return Date.now() - started;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const workbench = await startEditor();
const browser = await chromium.launch({ executablePath: executable, args: flags });
try {
  for (const file of traces) {
    const timesOurs = [];
    const timesDevtools = [];
    const timesEditor = [];
    const timesWhole = [];
    const timesCli = [];
    const accounts = [];
    for (let i = 0; i < runs; i++) {
      timesOurs.push(await ours(browser, file));
      timesDevtools.push(await devtools(browser, file));
      if (workbench) {
        const { firstMs, wholeMs, account } = await editor(workbench.page, file);
        timesEditor.push(firstMs);
        accounts.push([firstMs, account]);
        timesWhole.push(wholeMs);
        timesCli.push(cli(file));
      }
    }
    const a = median(timesOurs);
    const b = median(timesDevtools);
    console.log(`first-frame ${path.basename(file)} ours ${a} devtools ${b} ratio ${(a / b).toFixed(2)}`);
    if (workbench) {
      const e = median(timesEditor);
      const c = median(timesCli);
      console.log(
        `first-frame-editor ${path.basename(file)} editor ${e} whole ${median(timesWhole)} devtools ${b} ratio ${(e / b).toFixed(2)} ` +
          `cli ${c} editor/cli ${(e / c).toFixed(2)}`,
      );
      console.log(`editor-account ${path.basename(file)} ${accounts.find(([ms]) => ms === e)?.[1] ?? '-'}`);
    }
  }
} finally {
  await browser.close();
  await workbench?.suite.finish();
}
