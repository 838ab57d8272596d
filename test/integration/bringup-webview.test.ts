/**
 * The bring-up view's webview in headless Debian chromium, fed what the host would post for a broken session
 * (flows keyed on the torch id, an empty linked-activity resolver in the log). Screenshot in test-artifacts/.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBringup } from '../../extension/bringup/load';
import { toView } from '../../extension/bringup/view';
import { TRACES } from '../helpers/paths';
import type { BringupView } from '../../extension/protocol';
import { ARTIFACTS, buildWebviewBundle, launchChromium, openWebviewPage, ROOT } from '../helpers/browser';
import { writeSessionFolder } from '../fixtures/checks-trace';

/** A few of the theme variables VS Code defines (Dark Modern), so the page looks as it does in the editor. */
const THEME = `:root{--vscode-foreground:#cccccc;--vscode-sideBar-background:#181818;--vscode-editor-background:#1f1f1f;
--vscode-font-family:sans-serif;--vscode-font-size:13px;--vscode-editor-font-family:monospace;--vscode-descriptionForeground:#9d9d9d;
--vscode-errorForeground:#f85149;--vscode-testing-iconFailed:#f14c4c;--vscode-testing-iconPassed:#73c991;--vscode-testing-iconSkipped:#848484;
--vscode-editorWarning-foreground:#cca700;--vscode-editorInfo-foreground:#3794ff;--vscode-badge-background:#616161;--vscode-badge-foreground:#f8f8f8;
--vscode-button-secondaryBackground:#313131;--vscode-button-secondaryForeground:#cccccc;--vscode-input-background:#313131;--vscode-input-foreground:#cccccc;
--vscode-textBlockQuote-background:#2b2b2b;--vscode-textLink-foreground:#4daafc;--vscode-panel-border:#2b2b2b;--vscode-textCodeBlock-background:#2b2b2b;
--vscode-editor-findMatchHighlightBackground:#623315;--vscode-editor-findMatchBackground:#9e6a03;--vscode-editorLineNumber-foreground:#6e7681}`;

let browser: Browser;
let page: Page;
let view: BringupView;
const dir = mkdtempSync(path.join(tmpdir(), 'flagprof-bringup-view-'));

beforeAll(async () => {
  const session = path.join(dir, 'session');
  const log = readFileSync(path.join(ROOT, 'test/fixtures/bringup/cupti-session.log'), 'utf8')
    .trimEnd()
    .split('\n');
  writeSessionFolder(session, { flowsOnTorchId: true }, log);
  const model = await loadBringup(session, { platform: 'metax' });
  view = {
    target: model.target,
    tracePath: model.tracePath,
    logPath: model.logPath,
    header: model.header,
    checks: model.checks,
    diagnostics: model.diagnostics,
    diagnosticsOmitted: 0,
    summary: model.summary,
    log: model.log,
    logTruncated: false,
  };
  browser = await launchChromium();
  page = await openWebviewPage(browser, await buildWebviewBundle('webview/bringup/main.ts'), {
    theme: THEME,
    viewport: { width: 900, height: 1400 },
  });
  await page.evaluate((v) => window.postMessage({ type: 'bringup.show', view: v }, '*'), view);
  await page.waitForSelector('.check', { timeout: 5000 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('bring-up view', () => {
  it('asks the host for its state when it starts', async () => {
    const posted = await page.evaluate(() => (window as unknown as { posted: { type: string }[] }).posted);
    expect(posted[0]).toEqual({ type: 'bringup.ready' });
  });

  it('shows the session header', async () => {
    const header = await page.locator('.header').innerText();
    expect(header).toContain('kineto — torch has a PrivateUse1 backend (flagos) with a profiler plugin');
    expect(header).toContain('/usr/local/cuda-12.8/extras/CUPTI/lib64/libcupti.so.12');
    expect(header).toContain('API version');
  });

  it('shows the checks with status icons, failures open with their fix and evidence', async () => {
    expect(await page.locator('.check').count()).toBe(22);
    expect(await page.locator('.check.fail').count()).toBe(2);
    const p2 = page.locator('details.check.fail', { hasText: 'Flow arrows are paired' });
    expect(await p2.getAttribute('open')).not.toBeNull();
    expect(await p2.locator('.icon').innerText()).toBe('✗');
    expect(await p2.locator('.hint').innerText()).toMatch(/keyed on the torch id/);
    expect(await p2.locator('table.evidence tbody tr').count()).toBe(10);
  });

  it('groups diagnostics by component and filters them', async () => {
    const groups = await page.locator('.diagnostics .group > summary').allInnerTexts();
    expect(groups).toEqual(['cupti-shim (1)', 'cupti (11)', 'adaptor (11)', 'torch_fl (1)', 'unknown (2)']);
    await page.locator('label.sev-info input').uncheck();
    await expect.poll(() => page.locator('.diagnostics .diag.info').count()).toBe(0);
    const errors = await page.locator('.diagnostics .diag.error .code').allInnerTexts();
    expect(errors).toEqual(['A12', 'A16']);
    await page.locator('label.sev-info input').check();
  });

  it('searches the raw log', async () => {
    await page.locator('.log input[type=search]').fill('bufferCompleted|EMPTY');
    await expect.poll(() => page.locator('.log mark').count()).toBe(3);
    expect(await page.locator('.log mark.current').innerText()).toBe('bufferCompleted');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'bringup-view.png'), fullPage: true });
  });

  it('a stock torch-cuda trace: what differs by design is marked so, not failed; a shared skip reason shows once', async () => {
    const h100 = toView(await loadBringup(path.join(TRACES, 'tracelens_h100_bert_small.trace.json.gz')));
    await page.evaluate((v) => window.postMessage({ type: 'bringup.show', view: v }, '*'), h100);
    await page.locator('.header', { hasText: 'tracelens_h100_bert_small' }).waitFor({ timeout: 5000 });
    expect(await page.locator('.check.fail').count()).toBe(0);
    const byDesign = await page.locator('.check.info .id').allInnerTexts();
    expect(byDesign).toEqual(['P2', 'K5']);
    const p2 = page.locator('details.check.info', { hasText: 'Flow arrows are paired' }).first();
    expect(await p2.locator('.icon').innerText()).toBe('i');
    expect(await p2.locator('.result').innerText()).toMatch(/by design$/);
    await p2.locator('summary').click();
    expect(await p2.locator('.by-design').innerText()).toMatch(/torch-cuda leaves finish-only halves/);
    const groups = await page.locator('.skip-group').allInnerTexts();
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatch(/^\(1\) K3, K9, K12: runtime events are cuda_runtime/);
    const k9 = page.locator('details.check.skip', { hasText: 'Runtime events carry External id' });
    expect(await k9.locator('.result').innerText()).toBe('skipped: reason (1) below');
    expect(await page.locator('.totals').first().innerText()).toMatch(/2 by design/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'bringup-view-h100.png'), fullPage: true });
    await page.evaluate((v) => window.postMessage({ type: 'bringup.show', view: v }, '*'), view);
    await page.locator('.header', { hasText: 'kineto' }).waitFor({ timeout: 5000 });
  });

  it('posts the toolbar actions to the host', async () => {
    await page.getByRole('button', { name: 'Copy Report' }).click();
    await page.getByRole('button', { name: 'Run Parity Workload' }).click();
    const posted = await page.evaluate(() =>
      (window as unknown as { posted: { type: string }[] }).posted.map((m) => m.type),
    );
    expect(posted.slice(-2)).toEqual(['bringup.copyReport', 'bringup.runParity']);
  });
});
