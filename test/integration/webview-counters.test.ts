/**
 * Counter rows in a real browser: the memory track of a real H100 trace (torch's profile_memory `[memory]`
 * events) drawn as a step area chart that rises and falls, its peak marked, hovered and zoomed. Screenshots land
 * in test-artifacts/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { importTrace, importTraceBytes } from '../../extension/import/kineto';
import { packTimeline, type TimelinePayload } from '../../extension/protocol';
import { encodeTimeline } from '../../extension/timeline/encode';
import { buildReportHtml, type WebviewBundle } from '../../extension/timeline/report';
import { ARTIFACTS, buildWebviewBundle, launchChromium, ROOT, TRACES } from '../helpers/browser';

const FILE = 'tracelens_h100_bert_small.trace.json.gz';
const MEMORY_TRACK = 'Memory · CUDA 0';

let browser: Browser;
let bundle: WebviewBundle;
let payload: TimelinePayload;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const profile = await importTrace(path.join(TRACES, FILE));
  payload = encodeTimeline(profile, analyze(profile), { title: FILE });
  [bundle, browser] = await Promise.all([buildWebviewBundle(), launchChromium()]);
});

afterAll(async () => {
  await browser?.close();
});

async function openReport(name: string, shown = payload, title = FILE): Promise<Page> {
  const file = path.join(ARTIFACTS, `${name}.html`);
  writeFileSync(file, buildReportHtml(packTimeline(shown), title, bundle));
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`file://${file}`);
  await page.waitForFunction(() => window.flagprofTimeline || window.flagprofTimelineError, null, {
    timeout: 30_000,
  });
  expect(await page.evaluate(() => window.flagprofTimelineError)).toBeUndefined();
  expect(errors).toEqual([]);
  return page;
}

/** Where the memory row is on screen (CSS px), scrolled into view. */
async function memoryRow(page: Page): Promise<{ y: number; height: number }> {
  return page.evaluate((name) => {
    const view = window.flagprofTimeline!.view;
    const layout = (
      view as unknown as { rows: { rows: { kind: string; label: string; y: number; height: number }[] } }
    ).rows;
    const row = layout.rows.find((r) => r.kind === 'counter' && r.label === name);
    if (!row) throw new Error(`no ${name} row`);
    view.setView(view.viewStart, view.viewEnd, Math.max(0, row.y - 40));
    view.render();
    return { y: view.viewport.screenY(row.y), height: row.height };
  }, MEMORY_TRACK);
}

/**
 * The chart's top edge per pixel column of the row: for each x, the first row of pixels from the top of the
 * chart that differs from the background, as a height above the row's bottom (0 where nothing is drawn).
 */
async function chartProfile(page: Page, row: { y: number; height: number }): Promise<number[]> {
  return page.evaluate(({ y, height }) => {
    const canvas = document.querySelector('canvas.timeline-canvas') as HTMLCanvasElement;
    const dpr = window.devicePixelRatio || 1;
    const x0 = Math.round(205 * dpr);
    const top = Math.round((y + 4) * dpr);
    const h = Math.round((height - 8) * dpr);
    const w = canvas.width - x0 - 2;
    const data = canvas.getContext('2d')!.getImageData(x0, top, w, h).data;
    const bg = [data[(h - 1) * w * 4], data[(h - 1) * w * 4 + 1], data[(h - 1) * w * 4 + 2]];
    const heights: number[] = [];
    for (let x = 0; x < w; x++) {
      let found = 0;
      for (let r = 0; r < h; r++) {
        const i = (r * w + x) * 4;
        if (Math.abs(data[i] - bg[0]) + Math.abs(data[i + 1] - bg[1]) + Math.abs(data[i + 2] - bg[2]) > 40) {
          found = h - r;
          break;
        }
      }
      heights.push(found);
    }
    return heights;
  }, row);
}

describe(`the memory track of ${FILE}`, () => {
  it('is in the payload: allocated and reserved of CUDA 0', () => {
    const track = payload.header.counters.find((c) => c.name === MEMORY_TRACK);
    expect(track?.series.map((s) => s.name)).toEqual(['allocated', 'reserved']);
  });

  it('draws a curve that rises and falls, with its peak marked, and hovers with values in MB', async () => {
    const page = await openReport('webview-counters-bert');
    try {
      await page.waitForTimeout(100);
      const row = await memoryRow(page);
      await page.waitForTimeout(50);
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-counters-bert.png') });
      const heights = (await chartProfile(page, row)).filter((h) => h > 0);
      expect(heights.length).toBeGreaterThan(300);
      // Rises and falls: the top edge goes both up and down along the row, by more than a few pixels.
      let rises = 0;
      let falls = 0;
      for (let k = 1; k < heights.length; k++) {
        if (heights[k] > heights[k - 1]) rises++;
        if (heights[k] < heights[k - 1]) falls++;
      }
      expect(rises).toBeGreaterThan(2);
      expect(falls).toBeGreaterThan(2);
      expect(Math.max(...heights) - Math.min(...heights)).toBeGreaterThan(5);

      // The row's name column and the chart: the peak's label is on the canvas (drawn text is not in the DOM, so
      // the hover is what a test can read).
      const box = (await page.locator('canvas.timeline-canvas').boundingBox())!;
      const track = payload.header.counters.find((c) => c.name === MEMORY_TRACK)!;
      const allocated = track.series[0];
      const peakX = await page.evaluate(
        (ns) => window.flagprofTimeline!.view.viewport.xOf(ns),
        allocated.peakNs,
      );
      await page.mouse.move(box.x + peakX + 1, box.y + row.y + row.height / 2);
      const tip = page.locator('.timeline-tooltip');
      await expect.poll(() => tip.isVisible()).toBe(true);
      const text = await tip.innerText();
      expect(text).toContain(MEMORY_TRACK);
      expect(text).toMatch(/allocated \d+\.\d MB · reserved \d+\.\d MB at /);
      expect(text).toContain(`allocated ${(allocated.max / 2 ** 20).toFixed(1)} MB`);
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-counters-bert-hover.png') });

      // Zoomed in on the peak, the chart is still drawn (the levels of detail follow the view).
      await page.evaluate((ns) => {
        const view = window.flagprofTimeline!.view;
        view.setView(ns - 200_000, ns + 200_000, view.scrollTop);
        view.render();
      }, allocated.peakNs);
      await page.waitForTimeout(50);
      const zoomed = (await chartProfile(page, row)).filter((h) => h > 0);
      expect(zoomed.length).toBeGreaterThan(300);
      expect(await page.evaluate(() => window.flagprofTimeline!.view.stats.counterPoints)).toBeGreaterThan(0);
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-counters-bert-zoomed.png') });
    } finally {
      await page.close();
    }
  });
});

describe('a CUDA graph replay (test/fixtures/graphs)', () => {
  it("names a replayed kernel's graph and node and its launch, and the launch's kernels and time", async () => {
    const file = path.join(ROOT, 'test/fixtures/graphs/cuda_graph_replay.trace.json');
    const profile = await importTrace(file);
    const graph = encodeTimeline(profile, analyze(profile), { title: 'cuda_graph_replay' });
    const slice = (name: string) => {
      const id = graph.header.strings.indexOf(name);
      return graph.columns.name.indexOf(id);
    };
    const page = await openReport('webview-graph', graph, 'cuda_graph_replay');
    try {
      const details = page.locator('#details-graph');
      await page.evaluate(
        (s) => window.flagprofTimeline!.select(s),
        slice('vectorized_elementwise_kernel<gelu>'),
      );
      await expect
        .poll(() => details.innerText())
        .toBe('graph 3 · node 81604378626, launched by cudaGraphLaunch (4 kernels in this launch)');
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-graph-kernel.png') });
      await page.evaluate((s) => window.flagprofTimeline!.select(s), slice('cudaGraphLaunch'));
      // 30 + 8 + 28 + 4 µs of device time.
      await expect.poll(() => details.innerText()).toBe('graph 3: 4 kernels · 70 µs device time');
      expect(await page.locator('#details-launched li').count()).toBe(4);
      // A graph's kernel whose launch is not in the trace still names its graph.
      await page.evaluate((s) => window.flagprofTimeline!.select(s), slice('triton_poi_fused_add_0'));
      await expect
        .poll(() => details.innerText())
        .toBe('graph 4 · node 81604378700, its launch not in the trace');
      // A kernel launched on its own is no graph's.
      await page.evaluate((s) => window.flagprofTimeline!.select(s), slice('sm90_xmma_gemm_warmup'));
      await expect.poll(() => page.locator('#details-name').innerText()).toBe('sm90_xmma_gemm_warmup');
      expect(await details.count()).toBe(0);
    } finally {
      await page.close();
    }
  });
});

describe('a counter of 300,000 samples', () => {
  it('travels downsampled, draws about a bucket per pixel at every zoom, and keeps its spike', async () => {
    const n = 300_000;
    const events: object[] = [
      { ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 1, tid: 1, ts: 0, dur: n / 10 },
    ];
    for (let k = 0; k < n; k++) {
      events.push({
        ph: 'C',
        name: 'queue depth',
        pid: 1,
        ts: k / 10,
        args: { depth: k === 123_456 ? 10_000 : k % 97 },
      });
    }
    const profile = importTraceBytes('counters.json', new TextEncoder().encode(JSON.stringify(events)));
    const big = encodeTimeline(profile, analyze(profile), { title: 'counters' });
    const [series] = big.header.counters[0].series;
    expect(series.points).toBe(n);
    expect(series.to - series.from).toBeLessThanOrEqual(100_000);
    const page = await openReport('webview-counters-large', big, 'counters');
    try {
      const frame = await page.evaluate(() => {
        const view = window.flagprofTimeline!.view;
        view.render();
        const fit = view.stats.counterPoints;
        view.setView(12_345_000, 12_346_000, 0);
        view.render();
        const zoomed = view.stats.counterPoints;
        const t0 = performance.now();
        for (let k = 0; k < 20; k++) {
          view.setView(k * 1_000_000, k * 1_000_000 + 5_000_000, 0);
          view.render();
        }
        return { fit, zoomed, perFrameMs: (performance.now() - t0) / 20, width: view.viewport.width };
      });
      // Buckets scale with pixels, not with points.
      expect(frame.fit).toBeGreaterThan(100);
      expect(frame.fit).toBeLessThan(4 * frame.width);
      expect(frame.zoomed).toBeGreaterThan(0);
      expect(frame.perFrameMs).toBeLessThan(100);
      await page.evaluate(() => {
        const view = window.flagprofTimeline!.view;
        view.fit();
        view.render();
      });
      await page.screenshot({ path: path.join(ARTIFACTS, 'webview-counters-large.png') });
    } finally {
      await page.close();
    }
  });
});
