/**
 * The timeline in a real browser: reports of real CUDA, ROCm, Ascend and MTIA traces opened in headless Debian
 * chromium. Screenshots land in test-artifacts/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { openRun } from '../../extension/capture/merged';
import { reindex } from '../../extension/import/finish';
import { importTrace } from '../../extension/import/kineto';
import { Profile, SliceKind } from '../../extension/model/profile';
import {
  packAnalysis,
  packTimeline,
  type TimelinePayload,
  type TimelineSite,
} from '../../extension/protocol';
import { compressTimelineBuffer, encodeAnalysis, encodeTimeline } from '../../extension/timeline/encode';
import { buildReportHtml, type WebviewBundle } from '../../extension/timeline/report';
import type { WebviewToHost } from '../../extension/protocol';
import { TimelineModel } from '../../webview/model';
import { rangeTotals } from '../../webview/timeline/rangeTotals';
import { ARTIFACTS, buildWebviewBundle, launchChromium, TRACES } from '../helpers/browser';

interface Case {
  label: string;
  file: string;
  /** The trace names source lines (python_function frames), so a kernel has a source link. */
  hasSource: boolean;
}

const CASES: Case[] = [
  { label: 'cuda', file: 'tracelens_h100_bert_small.trace.json.gz', hasSource: true },
  { label: 'rocm', file: 'tracelens_mi300x_bert_small.trace.json.gz', hasSource: true },
  { label: 'ascend', file: 'ascend_npu_trace_view.json', hasSource: false },
  { label: 'mtia', file: 'hta_mtia_inference_rank0.trace.json.gz', hasSource: false },
];

/** Orange of selected flows (theme.ts: --vscode-charts-orange, default #d18616). */
const FLOW_SELECTED_RGB = [0xd1, 0x86, 0x16];

interface Chosen {
  slice: number;
  name: string;
  opName: string;
  site: TimelineSite | undefined;
}

/** The details' Source as the page should write it: path, line, column where known, and how it was found. */
function sourceText(site: TimelineSite): string {
  const label = { function: 'function level', backward: 'backward', trace: 'from the trace' };
  const where = `${site.file}:${site.line}${site.column !== undefined ? `:${site.column}` : ''}`;
  return `${where} ${site.function}() · ${site.kind ? label[site.kind] : 'call site'}`;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A kernel the test can reach by an anchored regex search on its name: a kernel with a launching op (and a
 * source site, when the trace has them), as early as possible among the slices of that name, since Enter walks
 * the matches in start order. `position` is its index among them.
 */
function chooseKernel(payload: TimelinePayload, wantSource: boolean): Chosen & { position: number } {
  const c = payload.columns;
  const strings = payload.header.strings;
  const byName = new Map<number, number[]>();
  for (let i = 0; i < payload.header.sliceCount; i++) {
    const list = byName.get(c.name[i]);
    if (list) list.push(i);
    else byName.set(c.name[i], [i]);
  }
  let best: (Chosen & { position: number }) | undefined;
  for (const [, slices] of byName) {
    slices.sort((a, b) => c.start[a] - c.start[b] || a - b);
    const position = slices.findIndex(
      (i) => c.kind[i] === SliceKind.Kernel && c.opOf[i] >= 0 && (!wantSource || c.site[i] >= 0),
    );
    if (position < 0 || (best && best.position <= position)) continue;
    const slice = slices[position];
    const site = c.site[slice] >= 0 ? payload.header.tables.lines[c.site[slice]] : undefined;
    best = { slice, name: strings[c.name[slice]], opName: strings[c.name[c.opOf[slice]]], site, position };
  }
  if (!best) throw new Error('no kernel with a launching op in this trace');
  return best;
}

/** Pixels of the timeline canvas that are within `tolerance` of an RGB colour. */
async function countPixels(page: Page, rgb: number[], tolerance: number): Promise<number> {
  return page.evaluate(
    ([r, g, b, tol]) => {
      const canvas = document.querySelector('canvas.timeline-canvas') as HTMLCanvasElement;
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) <= tol) n++;
      }
      return n;
    },
    [...rgb, tolerance],
  );
}

/** Distinct colours and pixels differing from the top-left background pixel, in the slice area. */
async function paintedArea(page: Page): Promise<{ painted: number; colours: number }> {
  return page.evaluate(() => {
    const canvas = document.querySelector('canvas.timeline-canvas') as HTMLCanvasElement;
    const dpr = window.devicePixelRatio || 1;
    const x0 = Math.floor(210 * dpr);
    const y0 = Math.floor(30 * dpr);
    const image = canvas.getContext('2d')!.getImageData(x0, y0, canvas.width - x0, canvas.height - y0).data;
    const background = `${image[0]},${image[1]},${image[2]}`;
    const colours = new Set<string>();
    let painted = 0;
    for (let i = 0; i < image.length; i += 4) {
      const key = `${image[i]},${image[i + 1]},${image[i + 2]}`;
      if (key !== background) painted++;
      if (colours.size < 1000) colours.add(key);
    }
    return { painted, colours: colours.size };
  });
}

async function openReport(browser: Browser, html: string, name: string): Promise<Page> {
  const file = path.join(ARTIFACTS, `${name}.html`);
  writeFileSync(file, html);
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`file://${file}`);
  await page.waitForFunction(() => window.flagprofTimeline || window.flagprofTimelineError, null, {
    timeout: 30_000,
  });
  const failure = await page.evaluate(() => window.flagprofTimelineError);
  expect(failure, `the report page failed: ${failure}`).toBeUndefined();
  expect(errors).toEqual([]);
  return page;
}

let browser: Browser;
let bundle: WebviewBundle;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  [bundle, browser] = await Promise.all([buildWebviewBundle(), launchChromium()]);
});

afterAll(async () => {
  await browser?.close();
});

describe.each(CASES)('timeline report of $label ($file)', ({ label, file, hasSource }) => {
  it('renders, finds a kernel, shows its launching op and flow, and links its source', async () => {
    const tracePath = path.join(TRACES, file);
    const profile = await importTrace(tracePath);
    const analysis = analyze(profile);
    const payload = encodeTimeline(profile, analysis, { title: file });
    const chosen = chooseKernel(payload, hasSource);
    const page = await openReport(
      browser,
      buildReportHtml(packTimeline(payload), file, bundle),
      `webview-${label}`,
    );
    try {
      // The timeline renders: slices drawn in several colours over a good part of the canvas.
      await page.waitForTimeout(100);
      const area = await paintedArea(page);
      expect(area.painted).toBeGreaterThan(5_000);
      expect(area.colours).toBeGreaterThan(4);
      const blocks = await page.evaluate(() => window.flagprofTimeline!.view.stats.blocks);
      expect(blocks).toBeGreaterThan(10);
      await page.screenshot({ path: path.join(ARTIFACTS, `webview-${label}-fit.png`) });
      const orangeBefore = await countPixels(page, FLOW_SELECTED_RGB, 30);

      // Search finds the kernel: an anchored regex, Enter selects the first match.
      await page.locator('#search-regex').click();
      await page.locator('#search').click();
      await page.keyboard.type(`^${escapeRegex(chosen.name)}$`);
      for (let k = 0; k <= chosen.position; k++) await page.keyboard.press('Enter');
      await expect
        .poll(() => page.locator('#search-count').innerText())
        .toMatch(new RegExp(`^${chosen.position + 1} of \\d`));
      const selected = await page.evaluate(() => window.flagprofTimeline!.view.selected);
      expect(selected).toBe(chosen.slice);

      // The details panel names the kernel and its launching op.
      const details = await page.locator('#details').innerText();
      expect(details).toContain(chosen.name);
      expect(details).toContain('Launching op');
      const opLink = page.locator('#details a.slice-link').first();
      expect(await opLink.innerText()).toBe(chosen.opName);

      // The selected slice's flow arrow is drawn (in the selection's orange).
      await page.waitForTimeout(100);
      const flows = await page.evaluate(() => window.flagprofTimeline!.view.stats.flows);
      expect(flows).toBeGreaterThanOrEqual(1);
      const orangeAfter = await countPixels(page, FLOW_SELECTED_RGB, 30);
      expect(orangeAfter).toBeGreaterThan(orangeBefore + 10);
      await page.screenshot({ path: path.join(ARTIFACTS, `webview-${label}-kernel.png`) });

      // The source is the launching op's line in the one attribution (the hover's), named with how it was found;
      // its link posts the file and line to the host.
      if (hasSource) {
        expect(chosen.site).toBeDefined();
        expect(details).toContain(sourceText(chosen.site!));
        await page.locator('#details-source').click();
        const posted = await page.evaluate(() => window.flagprofHostMessages ?? []);
        const open = posted.filter(
          (m): m is Extract<WebviewToHost, { type: 'openSource' }> => m.type === 'openSource',
        );
        expect(open).toHaveLength(1);
        expect({ file: open[0].file, line: open[0].line }).toEqual({
          file: chosen.site!.file,
          line: chosen.site!.line,
        });
        // Enter on the timeline does the same from the keyboard.
        await page.locator('canvas.timeline-canvas').focus();
        await page.keyboard.press('Enter');
        const again = await page.evaluate(() =>
          (window.flagprofHostMessages ?? []).filter((m) => m.type === 'openSource'),
        );
        expect(again).toHaveLength(2);
        expect(again[1]).toMatchObject({ file: chosen.site!.file, line: chosen.site!.line });
      }

      // Following the op link selects the launching op, whose launched list leads back to the kernel.
      await opLink.click();
      const opSelected = await page.evaluate(() => window.flagprofTimeline!.view.selected);
      expect(opSelected).toBe(payload.columns.opOf[chosen.slice]);
      expect(await page.locator('#details-launched').innerText()).toContain(chosen.name);
    } finally {
      await page.close();
    }
  });
});

describe('a gzip-compressed payload (as the editor sends it)', () => {
  it('is inflated and shown, replacing the profile on screen', async () => {
    const small = await importTrace(path.join(TRACES, CASES[0].file));
    const other = await importTrace(path.join(TRACES, CASES[1].file));
    const first = packTimeline(encodeTimeline(small, analyze(small), { title: 'first' }));
    const second = compressTimelineBuffer(
      packTimeline(encodeTimeline(other, analyze(other), { title: 'second', argsOnRequest: true })),
    );
    expect(second.byteLength).toBeLessThan(
      packTimeline(encodeTimeline(other, analyze(other))).byteLength / 3,
    );
    const page = await openReport(browser, buildReportHtml(first, 'gzip', bundle), 'webview-gzip');
    try {
      expect(await page.evaluate(() => window.flagprofTimeline!.model.sliceCount)).toBe(small.slices.length);
      await page.evaluate(
        (bytes) => {
          window.postMessage({ type: 'init', payload: new Uint8Array(bytes).buffer }, '*');
        },
        Array.from(new Uint8Array(second)),
      );
      await expect
        .poll(() => page.evaluate(() => window.flagprofTimeline!.model.sliceCount))
        .toBe(other.slices.length);
      expect(await page.title()).toContain('second');
    } finally {
      await page.close();
    }
  });
});

describe("a profile drawn before its analysis (the editor's first frame)", () => {
  it('shows the slices at once, then the links, tables and flows where the user is, its lanes kept', async () => {
    const profile = await importTrace(path.join(TRACES, CASES[0].file));
    const analysis = analyze(profile);
    const whole = encodeTimeline(profile, analysis, { title: 'bert' });
    const kernel = chooseKernel(whole, true);
    const pending = packTimeline(encodeTimeline(profile, undefined, { title: 'bert' }));
    const linked = compressTimelineBuffer(packAnalysis(encodeAnalysis(profile, analysis, 42)));
    const page = await openReport(
      browser,
      buildReportHtml(pending, 'before-analysis', bundle),
      'webview-pending',
    );
    try {
      const status = page.locator('.status');
      await expect
        .poll(() => status.innerText())
        .toMatch(/^First frame in \d+ ms · linking kernels to ops and source lines…$/);
      // Without the analysis: the kernel has no launching op, there are no flows and the tables are empty.
      await page.evaluate((slice) => window.flagprofTimeline!.select(slice), kernel.slice);
      const details = page.locator('.details');
      await expect.poll(() => details.innerText()).toContain(kernel.name);
      expect(await details.innerText()).not.toContain('Launching op');
      const before = await page.evaluate(() => {
        const { model, view } = window.flagprofTimeline!;
        (window as unknown as { lanesBefore: unknown }).lanesBefore = model.lanes[0];
        view.setView(model.header.startNs + 1000, model.header.startNs + 5_000_000, 0);
        return {
          ops: model.header.tables.ops.length,
          flows: model.columns.flowTo.length,
          opOf: model.columns.opOf[window.flagprofTimeline!.view.selected],
        };
      });
      expect(before).toEqual({ ops: 0, flows: 0, opOf: -1 });
      const viewBefore = await page.evaluate(() => [
        window.flagprofTimeline!.view.viewStart,
        window.flagprofTimeline!.view.viewEnd,
      ]);
      await page.evaluate(
        (bytes) => window.postMessage({ type: 'analysis', payload: new Uint8Array(bytes).buffer }, '*'),
        Array.from(new Uint8Array(linked)),
      );
      await expect
        .poll(() => status.innerText())
        .toMatch(/^First frame in \d+ ms · linked \(analysis 42 ms\)$/);
      const after = await page.evaluate(() => {
        const { model, view } = window.flagprofTimeline!;
        return {
          ops: model.header.tables.ops.length,
          flows: model.columns.flowTo.length,
          opOf: model.columns.opOf[view.selected],
          selected: view.selected,
          view: [view.viewStart, view.viewEnd],
          sameLanes: model.lanes[0] === (window as unknown as { lanesBefore: unknown }).lanesBefore,
          pending: model.header.linkingPending,
        };
      });
      expect(after).toEqual({
        ops: analysis.ops.length,
        flows: whole.columns.flowTo.length,
        opOf: whole.columns.opOf[kernel.slice],
        selected: kernel.slice,
        view: viewBefore,
        sameLanes: true,
        pending: undefined,
      });
      expect(after.ops).toBeGreaterThan(0);
      expect(after.opOf).toBeGreaterThanOrEqual(0);
      await expect.poll(() => details.innerText()).toContain('Launching op');
      expect(await details.innerText()).toContain(kernel.opName);
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-linked.png') });
    } finally {
      await page.close();
    }
  });
});

describe("a run's first part, shown while its other parts are read", () => {
  it('says what is still to come; the whole run then replaces it with a fresh view', async () => {
    const firsts: { profile: Profile; remaining: number }[] = [];
    const opened = await openRun(path.join(TRACES, 'param_dlrm_v100x8'), {
      onFirstPart: (part, remaining) => {
        firsts.push({ profile: part.profile, remaining });
      },
    });
    expect(firsts.map((f) => f.remaining)).toEqual([7]);
    const part = firsts[0].profile;
    const partial = packTimeline(
      encodeTimeline(part, analyze(part), {
        title: 'ranks',
        source: 'ranks',
        partial: 'Rank 0 shown · 7 more ranks opening…',
      }),
    );
    const whole = compressTimelineBuffer(
      packTimeline(
        encodeTimeline(opened.profile, analyze(opened.profile), { title: 'ranks', source: 'ranks' }),
      ),
    );
    const page = await openReport(
      browser,
      buildReportHtml(partial, 'first-part', bundle),
      'webview-first-part',
    );
    try {
      const status = page.locator('.status');
      await expect.poll(() => status.innerText()).toBe('Rank 0 shown · 7 more ranks opening…');
      expect(await page.evaluate(() => window.flagprofTimeline!.model.sliceCount)).toBe(part.slices.length);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-first-part.png') });
      // The user zooms into rank 0 meanwhile: the whole run, on its own clock, opens fitted instead.
      await page.evaluate(() => {
        const { view, model } = window.flagprofTimeline!;
        view.setView(model.header.startNs, model.header.startNs + 1000, 0);
      });
      await page.evaluate(
        (bytes) => window.postMessage({ type: 'init', payload: new Uint8Array(bytes).buffer }, '*'),
        Array.from(new Uint8Array(whole)),
      );
      await expect
        .poll(() => page.evaluate(() => window.flagprofTimeline!.model.sliceCount))
        .toBe(opened.profile.slices.length);
      expect(await status.innerText()).toMatch(/^First frame in \d+ ms$/);
      const span = await page.evaluate(() => {
        const { view } = window.flagprofTimeline!;
        return view.viewEnd - view.viewStart;
      });
      expect(span).toBeGreaterThan(1000);
    } finally {
      await page.close();
    }
  });
});

describe('args on request (the editor leaves them out of the payload)', () => {
  it("asks the host for a selected slice's args once, shows them when they come, and the payload is smaller", async () => {
    const tracePath = path.join(TRACES, CASES[0].file);
    const profile = await importTrace(tracePath);
    const analysis = analyze(profile);
    const inline = packTimeline(encodeTimeline(profile, analysis, { title: CASES[0].file }));
    const payload = encodeTimeline(profile, analysis, { title: CASES[0].file, argsOnRequest: true });
    const lean = packTimeline(payload);
    expect(payload.header.argsOnRequest).toBe(true);
    expect(payload.columns.argsBytes.length).toBe(0);
    // Only whether each slice has args travels: the host looks its own index up.
    expect(new Set(payload.columns.args)).toEqual(new Set([0, -1]));
    expect(lean.byteLength).toBeLessThan(inline.byteLength - profile.args.raw().bytes.length + 1);
    let slice = -1;
    for (let i = 0; i < profile.slices.length && slice < 0; i++)
      if (profile.slices.args[i] >= 0 && Object.keys(profile.argsOf(i)).length > 0) slice = i;
    expect(slice).toBeGreaterThanOrEqual(0);
    const page = await openReport(browser, buildReportHtml(lean, 'args-on-request', bundle), 'webview-args');
    try {
      await page.evaluate((s) => window.flagprofTimeline!.select(s), slice);
      await expect.poll(() => page.locator('#details .details-args-loading').count()).toBe(1);
      const asked = () =>
        page.evaluate(() => (window.flagprofHostMessages ?? []).filter((m) => m.type === 'args'));
      expect(await asked()).toEqual([{ type: 'args', slice }]);
      // Selected again before the answer: not asked twice.
      await page.evaluate((s) => window.flagprofTimeline!.select(s), slice);
      expect(await asked()).toHaveLength(1);
      const text = profile.args.text(profile.slices.args[slice]);
      await page.evaluate(({ s, t }) => window.postMessage({ type: 'args', slice: s, args: t }, '*'), {
        s: slice,
        t: text,
      });
      const [key] = Object.keys(profile.argsOf(slice));
      await expect.poll(() => page.locator('#details .details-args dt').first().innerText()).toBe(key);
      expect(await page.locator('#details .details-args-loading').count()).toBe(0);
    } finally {
      await page.close();
    }
  });
});

describe('timeline interaction', () => {
  it('zooms with W, pans with D, selects from the ops table, follows the theme, and shows host errors', async () => {
    const tracePath = path.join(TRACES, CASES[0].file);
    const profile = await importTrace(tracePath);
    const analysis = analyze(profile);
    const payload = encodeTimeline(profile, analysis, { title: CASES[0].file });
    const page = await openReport(
      browser,
      buildReportHtml(packTimeline(payload), 'interaction', bundle),
      'webview-interaction',
    );
    try {
      const span = () =>
        page.evaluate(() => window.flagprofTimeline!.view.viewEnd - window.flagprofTimeline!.view.viewStart);
      const startOf = () => page.evaluate(() => window.flagprofTimeline!.view.viewStart);
      const before = await span();
      await page.locator('canvas.timeline-canvas').focus();
      await page.keyboard.down('w');
      await page.waitForTimeout(400);
      await page.keyboard.up('w');
      const zoomed = await span();
      expect(zoomed).toBeLessThan(before * 0.8);
      const left = await startOf();
      await page.keyboard.down('d');
      await page.waitForTimeout(300);
      await page.keyboard.up('d');
      expect(await startOf()).toBeGreaterThan(left);
      await page.keyboard.press('0');
      await expect.poll(span).toBeGreaterThan(before * 0.9);

      // A row of the ops table selects that op's longest call in the timeline.
      const topOp = analysis.ops[0].name;
      const row = page.locator('.vtable-body .vtable-row').first();
      expect(await row.locator('.vtable-cell').first().innerText()).toBe(topOp);
      await row.click();
      const selectedName = await page.evaluate(() => {
        const t = window.flagprofTimeline!;
        return t.model.nameOf(t.view.selected);
      });
      expect(selectedName).toBe(topOp);
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-interaction-op.png') });

      // VS Code's theme: the body class and the --vscode-* variables it sets; the canvas follows at once.
      // The background is the most common colour of the slice area.
      const backgroundPixel = () =>
        page.evaluate(() => {
          const canvas = document.querySelector('canvas.timeline-canvas') as HTMLCanvasElement;
          const x0 = Math.ceil(210 * (window.devicePixelRatio || 1));
          const data = canvas
            .getContext('2d')!
            .getImageData(x0, 40, canvas.width - x0, canvas.height - 40).data;
          const counts = new Map<number, number>();
          for (let i = 0; i < data.length; i += 4) {
            const key = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
            counts.set(key, (counts.get(key) ?? 0) + 1);
          }
          const [mode] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0];
          return [mode >> 16, (mode >> 8) & 255, mode & 255];
        });
      await page.locator('canvas.timeline-canvas').focus();
      await page.keyboard.press('Escape');
      await page.evaluate(() => {
        document.documentElement.style.setProperty('--vscode-editor-background', '#1e1e1e');
        document.documentElement.style.setProperty('--vscode-editor-foreground', '#d4d4d4');
        document.body.className = 'vscode-dark';
      });
      await expect.poll(backgroundPixel).toEqual([0x1e, 0x1e, 0x1e]);
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-theme-dark.png') });
      await page.evaluate(() => {
        document.documentElement.style.setProperty('--vscode-editor-background', '#000000');
        document.documentElement.style.setProperty('--vscode-contrastBorder', '#6fc3df');
        document.body.className = 'vscode-high-contrast';
      });
      await expect.poll(backgroundPixel).toEqual([0, 0, 0]);
      await expect.poll(() => countPixels(page, [0x6f, 0xc3, 0xdf], 10)).toBeGreaterThan(200);
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-theme-high-contrast.png') });

      // An import error from the host replaces the timeline with its one line, naming the file.
      const message = `${tracePath}: expected ',' or '}' after an event (at byte 1234)`;
      await page.evaluate(
        (text) => window.postMessage({ type: 'error', title: 'Cannot show trace.json', message: text }, '*'),
        message,
      );
      await expect.poll(() => page.locator('[role=alert]').innerText()).toContain(message);
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-error.png') });
    } finally {
      await page.close();
    }
  });
});

/** Colourfulness of the slice area: the sum over its pixels of their largest less their smallest channel. */
async function colourfulness(page: Page): Promise<number> {
  return page.evaluate(() => {
    const canvas = document.querySelector('canvas.timeline-canvas') as HTMLCanvasElement;
    const x0 = Math.ceil(210 * (window.devicePixelRatio || 1));
    const y0 = Math.ceil(30 * (window.devicePixelRatio || 1));
    const data = canvas.getContext('2d')!.getImageData(x0, y0, canvas.width - x0, canvas.height - y0).data;
    let sum = 0;
    for (let i = 0; i < data.length; i += 4) {
      sum += Math.max(data[i], data[i + 1], data[i + 2]) - Math.min(data[i], data[i + 1], data[i + 2]);
    }
    return sum;
  });
}

/** The op of the trace whose children launched the most device slices it did not launch itself. */
function opWithChildKernels(model: TimelineModel): number {
  let best = 0;
  let op = -1;
  for (let i = 0; i < model.sliceCount; i++) {
    if (model.columns.kind[i] !== SliceKind.CpuOp) continue;
    const indirect = model.launchedUnder(i).length - model.launchedFrom(i).length;
    if (indirect > best) [best, op] = [indirect, i];
  }
  return op;
}

describe('the timeline at a glance (BERT on H100)', () => {
  it('draws flows for the selection only, fits it, totals a dragged range, pins a track and dims non-matches', async () => {
    const profile = await importTrace(path.join(TRACES, CASES[0].file));
    const payload = encodeTimeline(profile, analyze(profile), { title: CASES[0].file });
    const model = new TimelineModel(payload);
    const op = opWithChildKernels(model);
    const launched = model.launchedUnder(op);
    expect(launched.length).toBeGreaterThan(model.launchedFrom(op).length);
    const page = await openReport(
      browser,
      buildReportHtml(packTimeline(payload), 'glance', bundle),
      'webview-glance',
    );
    const stats = () =>
      page.evaluate(() => {
        const { flows, flowsHidden } = window.flagprofTimeline!.view.stats;
        return { flows, flowsHidden };
      });
    const view = () =>
      page.evaluate(() => {
        const v = window.flagprofTimeline!.view;
        return { start: v.viewStart, end: v.viewEnd, scrollTop: v.scrollTop, rows: v.viewport.rowsHeight };
      });
    try {
      // Nothing selected: no arrows and no note about hidden ones. "All flows" draws those in view.
      await page.waitForTimeout(100);
      expect(await stats()).toEqual({ flows: 0, flowsHidden: 0 });
      await page.locator('#all-flows').click();
      await expect.poll(async () => (await stats()).flows).toBeGreaterThan(10);
      await page.locator('#all-flows').click();
      await expect.poll(stats).toEqual({ flows: 0, flowsHidden: 0 });

      // The op's flows: its children's launches to their kernels, one arrow each.
      await page.evaluate((s) => window.flagprofTimeline!.select(s), op);
      await page.locator('canvas.timeline-canvas').focus();
      await page.keyboard.press('f');
      await expect.poll(async () => (await stats()).flows).toBe(launched.length);

      // Fit selection: the op and every kernel it launched inside the view, their rows on screen.
      const fitted = await view();
      const rowTop = (s: number) => page.evaluate((x) => window.flagprofTimeline!.view.rowTop(x), s);
      const tops = new Map<number, number>();
      for (const s of [op, ...launched]) tops.set(s, await rowTop(s));
      const onScreen = (y: number) => y >= fitted.scrollTop && y + 18 <= fitted.scrollTop + fitted.rows;
      // Rows too far apart for the screen keep the op's own row on it, the kernels' as near as they go.
      const tall = Math.max(...tops.values()) + 18 - Math.min(...tops.values()) + 16 > fitted.rows;
      expect(onScreen(tops.get(op)!)).toBe(true);
      for (const s of [op, ...launched]) {
        expect(payload.columns.start[s]).toBeGreaterThanOrEqual(fitted.start);
        expect(payload.columns.start[s] + payload.columns.dur[s]).toBeLessThanOrEqual(fitted.end);
        if (!tall) expect(onScreen(tops.get(s)!), `slice ${s}`).toBe(true);
      }
      if (tall) expect(fitted.scrollTop).toBeCloseTo(tops.get(op)! + 18 + 8 - fitted.rows, 0);
      const span = fitted.end - fitted.start;
      const opDur = payload.columns.dur[op];
      expect(span).toBeLessThan(Math.max(opDur, 1) * 50);
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-glance-fit-selection.png') });
      // The toolbar's button does the same after a zoom out.
      await page.keyboard.press('0');
      await expect.poll(async () => (await view()).end - (await view()).start).toBeGreaterThan(span * 2);
      await page.locator('#fit-selection').click();
      await expect.poll(async () => (await view()).start).toBeCloseTo(fitted.start, 0);

      // Shift+drag: the totals per op and per kernel inside the range, as computed from the same columns.
      const box = (await page.locator('canvas.timeline-canvas').boundingBox())!;
      await page.keyboard.down('Shift');
      await page.mouse.move(box.x + 260, box.y + 200);
      await page.mouse.down();
      await page.mouse.move(box.x + 500, box.y + 220, { steps: 5 });
      await page.mouse.move(box.x + box.width - 20, box.y + 240, { steps: 5 });
      await page.mouse.up();
      await page.keyboard.up('Shift');
      const range = await page.evaluate(() => window.flagprofTimeline!.view.range);
      expect(range).toBeDefined();
      expect(range!.end).toBeGreaterThan(range!.start);
      expect(await page.locator('#range-heading').innerText()).toMatch(/^Range /);
      const expected = rangeTotals(model, range!.start, range!.end);
      expect(expected.device.length).toBeGreaterThan(0);
      const firstRow = await page.locator('#range-device tr').nth(1).locator('td').allInnerTexts();
      expect(firstRow[0]).toBe(expected.device[0].name);
      expect(firstRow[1]).toBe(String(expected.device[0].count));
      expect(await page.locator('#range-ops tr').count()).toBe(Math.min(expected.ops.length, 100) + 1);
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-glance-range.png') });
      // Escape clears the range first (the op's details come back), then the selection.
      await page.keyboard.press('Escape');
      expect(await page.evaluate(() => window.flagprofTimeline!.view.range)).toBeUndefined();
      expect(await page.locator('#details-name').innerText()).toBe(model.nameOf(op));
      // A drag on the ruler selects a range too, without Shift.
      await page.mouse.move(box.x + 300, box.y + 10);
      await page.mouse.down();
      await page.mouse.move(box.x + 600, box.y + 10, { steps: 5 });
      await page.mouse.up();
      expect(await page.evaluate(() => window.flagprofTimeline!.view.range)).toBeDefined();
      await page.keyboard.press('Escape');

      // A click on the CPU thread's name pins it above the GPU stream; again unpins it.
      const kernelTop = await rowTop(launched[0]);
      const opTop = await rowTop(op);
      expect(opTop).toBeGreaterThan(kernelTop);
      const scrollTop = (await view()).scrollTop;
      const trackTop = opTop - model.laneOf(op)!.depth * 18 - 3;
      await page.mouse.click(box.x + 60, box.y + 24 + trackTop - scrollTop + 9);
      const pinned = await page.evaluate(() => window.flagprofTimeline!.view.pinned);
      expect(pinned).toEqual([model.trackOf(op)!.id]);
      expect(await rowTop(op)).toBeLessThan(await rowTop(launched[0]));
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-glance-pinned.png') });
      await page.evaluate((s) => window.flagprofTimeline!.select(s), op);
      await page.locator('canvas.timeline-canvas').focus();
      await page.keyboard.press('p');
      expect(await page.evaluate(() => window.flagprofTimeline!.view.pinned)).toEqual([]);

      // The GPU stream pinned stays under the ruler while the rows scroll: with it, Fit selection shows the
      // deep op and its kernel on one screen.
      const screenY = (s: number) =>
        page.evaluate((x) => {
          const v = window.flagprofTimeline!.view;
          return v.viewport.screenY(v.rowTop(x));
        }, s);
      await page.mouse.move(box.x + 500, box.y + 300);
      await page.mouse.wheel(0, -5000);
      await expect.poll(async () => (await view()).scrollTop).toBe(0);
      await page.mouse.click(box.x + 60, box.y + (await screenY(launched[0])) + 6);
      expect(await page.evaluate(() => window.flagprofTimeline!.view.pinned)).toEqual([
        model.trackOf(launched[0])!.id,
      ]);
      await page.mouse.move(box.x + 500, box.y + 300);
      await page.mouse.wheel(0, 5000);
      await expect.poll(async () => (await view()).scrollTop).toBeGreaterThan(100);
      const fixed = await page.evaluate(() => window.flagprofTimeline!.view.viewport.fixedHeight);
      expect(fixed).toBeGreaterThan(0);
      const kernelY = await screenY(launched[0]);
      expect(kernelY).toBeGreaterThanOrEqual(24);
      expect(kernelY + 18).toBeLessThanOrEqual(24 + fixed);
      await page.locator('canvas.timeline-canvas').focus();
      await page.keyboard.press('f');
      await page.waitForTimeout(50);
      const rowsBottom = 24 + (await view()).rows;
      for (const s of [op, ...launched]) {
        const y = await screenY(s);
        expect(y, `slice ${s}`).toBeGreaterThanOrEqual(24);
        expect(y + 18, `slice ${s}`).toBeLessThanOrEqual(rowsBottom);
      }
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-glance-pinned-stream-fit.png') });

      // Search dims what does not match: a name nothing has dims every slice; clearing it brings them back.
      await page.keyboard.press('0');
      await page.waitForTimeout(100);
      const vivid = await colourfulness(page);
      expect(await page.evaluate(() => window.flagprofTimeline!.search('no slice is named this'))).toBe(0);
      await expect.poll(() => colourfulness(page)).toBeLessThan(vivid * 0.5);
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-glance-dimmed.png') });
      await page.evaluate(() => window.flagprofTimeline!.search(''));
      await expect.poll(() => colourfulness(page)).toBeGreaterThan(vivid * 0.9);

      // The host's selection ("Show in timeline") comes fitted, what it launched with it.
      await page.evaluate((slice) => window.postMessage({ type: 'select', slice }, '*'), op);
      await expect.poll(async () => (await view()).end - (await view()).start).toBeLessThan(span * 1.01);
      const shown = await view();
      expect(shown.start).toBeLessThanOrEqual(payload.columns.start[op]);
      expect(shown.end).toBeGreaterThanOrEqual(payload.columns.start[op] + opDur);
    } finally {
      await page.close();
    }
  });
});

const USER = '/home/user/proj/model.py';

/**
 * A Profile Current File session's thread: runpy and the capture agent run the user's module, whose forward()
 * calls a matmul at model.py:40:12 that launches a kernel; torch.profiler's own call at the end.
 */
function sessionPayload(): { payload: TimelinePayload; slices: Record<string, number> } {
  const profile = new Profile('/sessions/run/trace.json.gz');
  const s = profile.strings;
  const unsized = { threadSortIndex: 0, sliceCount: 0, maxDepth: 0 };
  profile.tracks.push(
    {
      ...unsized,
      id: 0,
      pid: '100',
      tid: '1',
      kind: 'cpu',
      name: 'python',
      processName: 'python',
      processSortIndex: 0,
    },
    {
      ...unsized,
      id: 1,
      pid: '0',
      tid: '7',
      kind: 'device',
      name: 'stream 7',
      processName: 'GPU 0',
      processSortIndex: 1,
    },
  );
  const slices: Record<string, number> = {};
  const category: Partial<Record<SliceKind, string>> = {
    [SliceKind.PythonFunction]: 'python_function',
    [SliceKind.CpuOp]: 'cpu_op',
    [SliceKind.Runtime]: 'cuda_runtime',
    [SliceKind.Kernel]: 'kernel',
  };
  const push = (key: string, kind: SliceKind, track: number, start: number, dur: number, name: string) => {
    const cat = s.intern(category[kind] ?? '');
    // The launch and its kernel share a correlation id; all three carry the matmul's External id.
    const correlation = kind === SliceKind.Runtime || kind === SliceKind.Kernel ? 77 : NaN;
    const externalId = kind === SliceKind.PythonFunction ? NaN : 5;
    slices[key] = profile.slices.push(
      kind,
      track,
      start,
      dur,
      s.intern(name),
      cat,
      correlation,
      externalId,
      -1,
    );
  };
  const frame = (key: string, start: number, dur: number, name: string) =>
    push(key, SliceKind.PythonFunction, 0, start, dur, name);
  frame('runModule', 0, 100_000, '<frozen runpy>(198): _run_module_as_main');
  frame('runCode', 100, 99_800, '<frozen runpy>(88): _run_code');
  frame('agentMain', 200, 99_600, '/opt/flagprof_agent/__main__.py(483): main');
  frame('module', 1_000, 80_000, `${USER}(1): <module>`);
  frame('forward', 2_000, 50_000, `${USER}(16): forward`);
  push('matmul', SliceKind.CpuOp, 0, 3_000, 30_000, 'aten::matmul');
  push('launch', SliceKind.Runtime, 0, 4_000, 5_000, 'cudaLaunchKernel');
  push('kernel', SliceKind.Kernel, 1, 10_000, 20_000, 'ampere_sgemm_128x64_tn');
  frame('profilerCall', 85_000, 10_000, 'torch/profiler/profiler.py(538): add_metadata_json');
  profile.sites = new Map([[5, [{ file: USER, line: 40, column: 12, function: 'forward' }]]]);
  profile.eventCount = profile.slices.length;
  reindex(profile);
  return { payload: encodeTimeline(profile, analyze(profile), { title: 'session' }), slices };
}

describe("the profiler's own frames in the timeline", () => {
  it('are hidden and counted, shown by the toggle; the details and the Lines table name the line with its column', async () => {
    const { payload, slices } = sessionPayload();
    const page = await openReport(
      browser,
      buildReportHtml(packTimeline(payload), 'session', bundle),
      'webview-profiler-frames',
    );
    try {
      const count = page.locator('#profiler-frames-count');
      expect(await count.innerText()).toBe('4 profiler frames hidden');
      const laneOf = (slice: number) =>
        page.evaluate((s) => window.flagprofTimeline!.model.laneOfSlice[s], slice);
      const rowsHeight = () => page.evaluate(() => window.flagprofTimeline!.view.viewport.contentHeight);
      expect(await laneOf(slices.agentMain)).toBe(-1);
      const hiddenHeight = await rowsHeight();
      expect(await page.evaluate(() => window.flagprofTimeline!.search('runpy'))).toBe(0);

      // The kernel's source: the matmul's call site, with its column; the link posts both.
      await page.evaluate((s) => window.flagprofTimeline!.select(s), slices.kernel);
      const details = await page.locator('#details').innerText();
      expect(details).toContain(`${USER}:40:12 forward() · call site`);
      await page.locator('#details-source').click();
      const posted = await page.evaluate(() => window.flagprofHostMessages ?? []);
      expect(posted.filter((m) => m.type === 'openSource')).toEqual([
        { type: 'openSource', requestId: 1, file: USER, line: 40, column: 12 },
      ]);

      // The Lines table: the line with its column, self and total device and CPU time, sortable.
      await page.locator('vscode-tab-header', { hasText: 'Lines' }).click();
      const lines = page.locator('.vtable[aria-label=Lines]');
      const titles = await lines.locator('.vtable-header .vtable-cell').allInnerTexts();
      expect(titles).toEqual([
        'Source',
        'Function',
        'Device self',
        'Device total',
        'CPU self',
        'CPU total',
        'Ops',
        'Site',
      ]);
      const row = lines.locator('.vtable-body .vtable-row', { hasText: 'model.py:40:12' });
      expect(await row.locator('.vtable-cell').nth(7).innerText()).toBe('call site');
      await lines.locator('.vtable-header .vtable-cell', { hasText: 'Device total' }).click();
      expect(await lines.locator('.vtable-header .vtable-cell').nth(3).getAttribute('aria-sort')).toBe(
        'descending',
      );
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-profiler-frames-hidden.png') });

      // The toggle shows them at their own depths, and search finds them.
      await page.locator('#profiler-frames').click();
      await expect.poll(() => count.innerText()).toBe('4 profiler frames shown');
      expect(await laneOf(slices.agentMain)).toBeGreaterThanOrEqual(0);
      expect(await rowsHeight()).toBeGreaterThan(hiddenHeight);
      expect(await page.evaluate(() => window.flagprofTimeline!.search('runpy'))).toBe(2);
      expect(await page.evaluate(() => window.flagprofTimeline!.view.selected)).toBe(slices.kernel);
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-profiler-frames-shown.png') });
      await page.locator('#profiler-frames').click();
      await expect.poll(() => count.innerText()).toBe('4 profiler frames hidden');
      expect(await laneOf(slices.agentMain)).toBe(-1);
    } finally {
      await page.close();
    }
  });
});

describe("the profiler's own lines in the Lines table", () => {
  it('are hidden with its frames and shown with them', async () => {
    // An imported trace from Python on Windows: no call sites, and a runpy the attribution takes for user code.
    const profile = new Profile('trace.json');
    const s = profile.strings;
    profile.tracks.push({
      id: 0,
      pid: '1',
      tid: '1',
      kind: 'cpu',
      name: 'python',
      processName: 'python',
      processSortIndex: 0,
      threadSortIndex: 0,
      sliceCount: 0,
      maxDepth: 0,
    });
    const py = s.intern('python_function');
    const push = (kind: SliceKind, start: number, dur: number, name: string, cat: number, ext = NaN) =>
      profile.slices.push(kind, 0, start, dur, s.intern(name), cat, NaN, ext, -1);
    push(SliceKind.PythonFunction, 0, 100_000, 'C:\\Python310\\Lib\\runpy.py(86): _run_code', py);
    push(SliceKind.PythonFunction, 1_000, 90_000, 'C:\\work\\train.py(3): step', py);
    push(SliceKind.CpuOp, 2_000, 50_000, 'aten::add', s.intern('cpu_op'), 1);
    profile.eventCount = profile.slices.length;
    reindex(profile);
    const payload = encodeTimeline(profile, analyze(profile), { title: 'windows' });
    const page = await openReport(
      browser,
      buildReportHtml(packTimeline(payload), 'windows', bundle),
      'webview-profiler-lines',
    );
    try {
      // A CPU-only run: no device columns of zeros.
      const titles = (table: string) =>
        page.locator(`.vtable[aria-label=${table}] .vtable-header .vtable-cell`).allInnerTexts();
      expect(await titles('Ops')).toEqual(['Op', 'Calls', 'CPU self', 'CPU total']);
      await page.locator('vscode-tab-header', { hasText: 'Lines' }).click();
      expect(await titles('Lines')).toEqual(['Source', 'Function', 'CPU self', 'CPU total', 'Ops', 'Site']);
      const sources = () =>
        page.locator('.vtable[aria-label=Lines] .vtable-body .vtable-row .col-0').allInnerTexts();
      expect(await sources()).toEqual(['train.py:3']);
      expect(await page.locator('#profiler-frames-count').innerText()).toBe('1 profiler frame hidden');
      await page.locator('#profiler-frames').click();
      await expect.poll(async () => (await sources()).sort()).toEqual(['runpy.py:86', 'train.py:3']);
    } finally {
      await page.close();
    }
  });
});
