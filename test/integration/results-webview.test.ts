/**
 * The Results view's webview in headless Debian chromium, fed the model the host builds for a real H100 trace:
 * the totals, the tables, and the messages its links and buttons send. Screenshot in test-artifacts/.
 */
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { openRun } from '../../extension/capture/merged';
import { resultsModel } from '../../extension/capture/results';
import { importTrace } from '../../extension/import/kineto';
import type { ResultsModel } from '../../extension/results/protocol';
import { ARTIFACTS, buildWebviewBundle, launchChromium, openWebviewPage } from '../helpers/browser';
import { TRACES } from '../helpers/paths';

const THEME = `:root{--vscode-foreground:#cccccc;--vscode-editor-background:#1f1f1f;--vscode-font-family:sans-serif;
--vscode-font-size:13px;--vscode-editor-font-family:monospace;--vscode-descriptionForeground:#9d9d9d;--vscode-errorForeground:#f85149;
--vscode-testing-iconPassed:#73c991;--vscode-editorWarning-foreground:#cca700;--vscode-panel-border:#2b2b2b;--vscode-textLink-foreground:#4daafc;
--vscode-button-background:#0078d4;--vscode-button-foreground:#ffffff}`;

let browser: Browser;
let page: Page;
let model: ResultsModel;

beforeAll(async () => {
  const analysis = analyze(await importTrace(path.join(TRACES, 'tracelens_h100_bert_small.trace.json.gz')));
  model = resultsModel(analysis, {
    title: 'bert · 18:02',
    source: 'bert',
    session: {
      devices: ['NVIDIA H100'],
      notes: [],
      status: 'exception',
      exitCode: 1,
      mode: { chosen: 'kineto', reason: 'torch 2.13 traces CUDA itself' },
      exception: {
        type: 'RuntimeError',
        message: 'CUDA out of memory',
        file: '/home/user/bert/train.py',
        line: 42,
      },
    },
    wallMs: 12_300,
    canShowOutput: true,
  });
  browser = await launchChromium();
  page = await openWebviewPage(browser, await buildWebviewBundle('webview/results/main.ts'), {
    theme: THEME,
    viewport: { width: 1100, height: 1300 },
  });
  await page.evaluate((m) => window.postMessage({ type: 'results.show', model: m }, '*'), model);
  await page.waitForSelector('h1', { timeout: 10_000 });
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

const posted = () => page.evaluate(() => (window as unknown as { posted: { type: string }[] }).posted);

describe('the Results view', () => {
  it('says how the run ended and why it was captured that way, first', async () => {
    expect(await page.locator('h1').innerText()).toBe('bert · 18:02');
    expect(await page.locator('.ended.error').innerText()).toBe(
      'raised RuntimeError at train.py:42: CUDA out of memory — profile kept',
    );
    expect(await page.locator('.mode').innerText()).toContain('kineto: torch 2.13 traces CUDA itself');
    expect((await posted())[0]).toEqual({ type: 'results.ready' });
  });

  it('shows wall, CPU, device time and the device busy share as cards', async () => {
    const cards = await page.locator('.card').allInnerTexts();
    const text = cards.join(' | ');
    expect(text).toMatch(/Wall\s+12\.3 s/);
    expect(text).toMatch(/Device busy\s+\d+(\.\d)?%/);
    const share = model.device!.busyNs / model.device!.spanNs;
    expect(text).toContain(`${(share * 100).toFixed(1)}%`);
  });

  it('lists the top lines by device self time; a click opens the line', async () => {
    const rows = page.locator('section.table', { hasText: 'Top lines by device time' }).locator('tbody tr');
    expect(await rows.count()).toBe(model.lines.length);
    await rows.first().locator('a.line-link').click();
    const last = (await posted()).at(-1);
    expect(last).toEqual({
      type: 'results.openLine',
      file: model.lines[0].file,
      line: model.lines[0].line,
      column: model.lines[0].column,
    });
  });

  it('its buttons ask the host for the timeline, the bring-up checks, the output and a comparison', async () => {
    for (const [label, type] of [
      ['Open Timeline', 'results.openTimeline'],
      ['Bring-up Checks', 'results.openBringup'],
      ['Show Output', 'results.showOutput'],
      ['Compare with…', 'results.compare'],
    ]) {
      await page.locator('button', { hasText: label }).click();
      expect((await posted()).at(-1)).toEqual({ type });
    }
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'results-view.png'), fullPage: true });
  });

  it('shows a run of several ranks: communication per rank and the most waited-for collectives', async () => {
    const { profile } = await openRun(path.join(TRACES, 'param_dlrm_v100x8'));
    const ranks = resultsModel(analyze(profile), { title: 'dlrm', source: 'dlrm' });
    await page.evaluate((m) => window.postMessage({ type: 'results.show', model: m }, '*'), ranks);
    const section = page.locator('section.table', { hasText: 'Ranks (8)' });
    await section.waitFor({ timeout: 10_000 });
    const rows = section.locator('tbody tr');
    expect(await rows.count()).toBe(8);
    const straggler = ranks.ranks!.rows.reduce((a, b) => (b.stragglerCount > a.stragglerCount ? b : a));
    const cells = await rows.nth(ranks.ranks!.rows.indexOf(straggler)).locator('td').allInnerTexts();
    expect(cells[0]).toBe(straggler.rank);
    expect(cells[3]).toBe(String(straggler.stragglerCount));
    const waited = page.locator('section.table', { hasText: 'Most waited-for collectives' });
    expect(await waited.innerText()).toContain(ranks.ranks!.collectives[0].name);
    expect(await waited.innerText()).toContain(`rank ${ranks.ranks!.collectives[0].straggler}`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'results-view-ranks.png'), fullPage: true });
  });
});
