// npm run test:e2e:bringup — the bring-up view in a real VS Code (code-server) driven by Debian Chromium:
// packages and installs the VSIX, opens a broken capture session's trace in the trace viewer, checks that the
// FlagOS view follows it (checks, diagnostics, the Problems panel), copies the report, then runs
// "FlagOS: Run Parity Workload" on cpu with the project's Python and checks the new session is shown.
// Screenshots go to test-artifacts/e2e-bringup/. Needs scripts/install-e2e.sh and .venv (scripts/setup-python.sh).
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { quickOpen, runCommand } from './workbench.mjs';
import { createSteps, startSuite } from './steps.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const artifacts = path.join(root, 'test-artifacts', 'e2e-bringup');
const timeoutS = Number(process.env.E2E_TIMEOUT_S ?? 600);
const python = path.join(root, '.venv', 'bin', 'python');
const steps = createSteps(root, artifacts);
const { screenshot, step, commandTitle } = steps;
let page;

/** The test fixture builder (TypeScript) bundled on the fly, so the e2e session is the unit tests' broken trace. */
async function fixtureModule(scratch) {
  const out = path.join(scratch, 'fixture.mjs');
  await build({
    entryPoints: [path.join(root, 'test/fixtures/checks-trace.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: out,
    logLevel: 'silent',
  });
  return import(pathToFileURL(out).href);
}

/** The frame of the bring-up webview (the trace viewer's webview may be open too). */
async function bringupFrame(timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      if (
        await frame
          .locator('.toolbar button', { hasText: 'Run Parity Workload' })
          .count()
          .catch(() => 0)
      )
        return frame;
    }
    await page.waitForTimeout(500);
  }
  throw new Error('the bring-up view never rendered');
}

/**
 * The trace tab's timeline page once it has drawn. A tab's webview is built anew each time the tab is shown, and
 * VS Code focuses it when it has loaded: a quick pick opened before that closes under the user's click.
 */
async function timelineDrawn(timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const drawn = await frame
        .locator('.status', { hasText: /^(First frame|Whole trace) in / })
        .count()
        .catch(() => 0);
      if (drawn) return frame;
    }
    await page.waitForTimeout(250);
  }
  throw new Error('the trace tab never drew its timeline');
}

const suite = startSuite(steps, {
  root,
  artifacts,
  name: 'bringup',
  timeoutS,
});
const { scratch } = suite;

try {
  await steps.installTools();

  const vsix = await steps.packageVsix(['dist/bringup.js', 'dist/bringup.css', 'media/flagos-activity.svg']);

  const workspace = path.join(scratch, 'workspace');
  const session = path.join(workspace, 'broken-session');
  await step('write a capture session whose tracer keys flows on the torch id', async () => {
    const fixture = await fixtureModule(scratch);
    const lines = readFileSync(path.join(root, 'test/fixtures/bringup/cupti-session.log'), 'utf8')
      .trimEnd()
      .split('\n');
    fixture.writeSessionFolder(session, { flowsOnTorchId: true }, lines);
    // The trace viewer opens *.pt.trace.json.gz by default; the session keeps its other files beside it.
    cpSync(path.join(session, 'trace.json.gz'), path.join(session, 'parity.pt.trace.json.gz'));
    rmSync(path.join(session, 'trace.json.gz'));
  });

  let port;
  ({ page, port } = await suite.openWorkbench({
    vsix,
    workspace,
    settings: { 'flagos.pythonPath': python, 'flagos.bringup.platform': 'metax' },
    assertInstalled: (output) => assert.match(output, /successfully installed/i),
  }));

  await step('open the workspace', async () => {
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    await page
      .locator('.explorer-folders-view .monaco-list-row', { hasText: 'broken-session' })
      .first()
      .waitFor({ timeout: 90_000 });
  });

  await step('the FlagOS view container is in the activity bar', async () => {
    const item = page.locator('.activitybar .action-item a[aria-label^="FlagOS"]').first();
    await item.waitFor({ timeout: 60_000 });
    return await item.getAttribute('aria-label');
  });

  await step('opening the session trace in the trace viewer shows it in the bring-up view', async () => {
    await page.locator('.monaco-workbench').click({ position: { x: 700, y: 450 } });
    await quickOpen(page, 'parity.pt.trace.json.gz');
    const container = page.locator('.activitybar .action-item a[aria-label^="FlagOS"]').first();
    await container.click({ force: true });
    // Seen once on a loaded machine: the view's webview stayed blank. Closing and reopening the container (what a
    // user would do) recreates it; the step says so when it had to.
    let frame = await bringupFrame(30_000).catch(() => undefined);
    let reopened = '';
    if (!frame) {
      await container.click({ force: true });
      await page.waitForTimeout(1_000);
      await container.click({ force: true });
      frame = await bringupFrame();
      reopened = ' (after reopening the view)';
    }
    await frame.locator('.check').first().waitFor({ timeout: 60_000 });
    const header = await frame.locator('.header').innerText();
    assert.ok(header.includes('broken-session'), `the view shows ${header.slice(0, 200)}`);
    const failed = await frame.locator('.check.fail .id').allInnerTexts();
    assert.ok(failed.includes('P2') && failed.includes('K5'), `failing checks: ${failed.join(', ')}`);
    await screenshot('bringup-view');
    return `failing: ${failed.join(', ')}${reopened}`;
  });

  await step('failing checks are in the Problems panel against the trace', async () => {
    await runCommand(page, 'View: Focus Problems (Errors, Warnings, Infos)');
    const row = page
      .locator('.markers-panel .monaco-list-row', { hasText: 'P2 Flow arrows are paired' })
      .first();
    await row.waitFor({ timeout: 30_000 });
    const file = page
      .locator('.markers-panel .monaco-list-row', { hasText: 'parity.pt.trace.json.gz' })
      .first();
    await file.waitFor({ timeout: 10_000 });
    const log = page.locator('.markers-panel .monaco-list-row', { hasText: 'diagnostics.jsonl' }).first();
    await log.waitFor({ timeout: 10_000 });
    await screenshot('problems');
    return (await row.innerText()).replace(/\s+/g, ' ').slice(0, 120);
  });

  await step('"FlagOS: Copy Bring-up Report" copies the markdown report', async () => {
    await runCommand(page, commandTitle('flagos.copyBringupReport'));
    const toast = page
      .locator('.notifications-toasts .notification-toast', { hasText: 'bring-up report copied' })
      .first();
    await toast.waitFor({ timeout: 15_000 });
  });

  await step('"FlagOS: Run Parity Workload" on cpu profiles it and shows the new session', async () => {
    await runCommand(page, commandTitle('flagos.runParityWorkload'));
    const input = page.locator('.quick-input-widget input.input');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    await input.fill('cpu');
    await page
      .locator('.quick-input-widget .monaco-list-row.focused', { hasText: 'cpu' })
      .waitFor({ timeout: 5_000 });
    await page.keyboard.press('Enter');
    const frame = await bringupFrame();
    const deadline = Date.now() + 240_000;
    let header = '';
    while (Date.now() < deadline) {
      header = await frame
        .locator('.header')
        .innerText()
        .catch(() => '');
      if (header.includes('flagos_parity_workload')) break;
      await page.waitForTimeout(1_000);
    }
    assert.ok(
      header.includes('flagos_parity_workload'),
      `the view never showed the parity session: ${header.slice(0, 200)}`,
    );
    const k1 = await frame
      .locator('.check', { hasText: 'CPU ops and trace export' })
      .locator('.icon')
      .innerText();
    assert.equal(k1, '✓', `K1 is ${k1}`);
    await screenshot('parity-session');
    return header.split('\n').find((l) => l.startsWith('Mode')) ?? '';
  });

  await step(
    'the view follows the trace tab again, and "Show Bring-up Checks…" offers the latest session',
    async () => {
      const frame = await bringupFrame();
      // Away to the run's results and back to the trace: the view follows the tab the user switched to.
      await page.locator('.tab', { hasText: 'flagos_parity_workload' }).first().click();
      await page.waitForTimeout(500);
      await page.locator('.tab', { hasText: 'parity.pt.trace.json.gz' }).first().click();
      const header = async () =>
        frame
          .locator('.header')
          .innerText()
          .catch(() => '');
      const until = async (text, what) => {
        const deadline = Date.now() + 60_000;
        while (Date.now() < deadline && !(await header()).includes(text)) await page.waitForTimeout(500);
        assert.ok((await header()).includes(text), `${what}: ${(await header()).slice(0, 200)}`);
      };
      await until('broken-session', 'the view did not follow the trace tab');
      await timelineDrawn();
      const latest = page
        .locator('.quick-input-widget .monaco-list-row', { hasText: 'latest session' })
        .first();
      let label = '';
      // A picker that closed before the click (focus taken by the workbench) is opened again, at most twice more.
      for (let attempt = 1; ; attempt++) {
        await runCommand(page, commandTitle('flagos.bringup.show'));
        await latest.waitFor({ timeout: 15_000 });
        label = (await latest.innerText()).replace(/\s+/g, ' ');
        assert.ok(label.includes('flagos_parity_workload'), `the latest session offered: ${label}`);
        if (attempt === 1) await screenshot('show-checks-picker');
        if (await latest.click({ timeout: 5_000 }).then(() => true, () => false)) break;
        if (attempt === 3) throw new Error('the picker closed before its row could be picked, three times');
      }
      await until('flagos_parity_workload', 'the picked session is not shown');
      // A CPU-only capture skips the device checks for one reason: listed once, not once per check.
      const groups = await frame.locator('.skip-group').allInnerTexts();
      assert.ok(groups.length >= 1, 'no grouped skip reason in the view');
      await screenshot('latest-session');
      return `${label.slice(0, 80)}; grouped skips: ${groups.length}`;
    },
  );
} catch {
  process.exitCode = 1;
} finally {
  await suite.finish();
}
