// npm run bench:ui — the timeline in headless Debian chromium: time to first frame after the profile data
// arrives in the page, and frame times over a scripted sequence of zooms, pans and scrolls, on a synthetic
// 1-million-slice profile and on the largest real trace. Each frame forces rasterisation (a 1-pixel
// getImageData), so its time includes drawing, not only recording draw calls; each frame's time is the fastest
// of BENCH_UI_PASSES (3) runs of the sequence. Baseline in the same run: the
// same frames with level of detail off (every slice in view drawn).
// The same synthetic profile as a session has it (under runpy's and the agent's frames, hidden) also reports
// how long showing the profiler's frames takes: the lanes of every frame built, and the frame drawn.
// Targets: p95 <= 16.7 ms at 1M slices; first frame within 1.5 s of opening the largest real trace, counted from
// the user's action as the product's status line counts it: reading and analysing it, the payload, its transfer
// to the page and the page's first frame (the data's arrival alone is shown beside it).
// measurePage() runs inside the page: its browser globals are declared here for the linter.
/* global window, fetch, requestAnimationFrame */
import { build } from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const out = path.join(here, 'out');
mkdirSync(out, { recursive: true });
const sliceTarget = Number(process.env.BENCH_UI_SLICES ?? 1_000_000);
const passes = Number(process.env.BENCH_UI_PASSES ?? 3);
const largest = path.resolve(root, '..', 'shared', 'traces', 'tracelens_h100_owlv2_large.trace.json.gz');
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

await build({
  entryPoints: [path.join(here, 'ui-bench-data.ts')],
  outfile: path.join(out, 'ui-bench-data.js'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
});
const web = await build({
  entryPoints: [path.join(root, 'webview/main.ts')],
  bundle: true,
  write: false,
  outdir: path.join(out, 'ui-bench-webview'),
  platform: 'browser',
  format: 'iife',
  target: 'es2022',
  minify: true,
  logLevel: 'warning',
});
const script = web.outputFiles.find((f) => f.path.endsWith('.js')).text;
const style = web.outputFiles.find((f) => f.path.endsWith('.css'))?.text ?? '';
const data = createRequire(import.meta.url)(path.join(out, 'ui-bench-data.js'));

const page_html = `<!DOCTYPE html><html><head><meta charset="utf-8"><style>${style}</style></head>
<body><script>${script.replace(/<\/(script)/gi, '<\\/$1')}</script></body></html>`;

/** Runs in the page: receive the payload, wait for the first frame, then drive the scripted frames. */
async function drive(page, buffer) {
  // A loopback server hands the page its HTML and the payload (large bodies do not fit through the devtools
  // protocol's interception).
  const server = http.createServer((request, response) => {
    if (request.url === '/payload') {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      response.end(Buffer.from(buffer));
    } else {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(page_html);
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  try {
    await page.goto(`${origin}/index.html`);
    return await measurePage(page);
  } finally {
    server.close();
  }
}

function measurePage(page) {
  return page.evaluate(async (PASSES) => {
    const asked = performance.now();
    const payload = await (await fetch('/payload')).arrayBuffer();
    const arrived = performance.now();
    const transferMs = arrived - asked;
    window.postMessage({ type: 'init', payload }, '*', [payload]);
    while (!window.flagprofTimeline) await new Promise((r) => setTimeout(r, 5));
    const firstFrameWallMs = performance.now() - arrived;
    const { view, firstFrameMs } = window.flagprofTimeline;
    const levelsMs = await window.flagprofTimeline.levelsReady;
    await new Promise((r) => requestAnimationFrame(r));

    // The scripted session: zoom into 8 places in turn (down to ~100 ns across), pan at each depth, scroll.
    const steps = [];
    const width = view.canvas.clientWidth;
    for (let place = 0; place < 8; place++) {
      const x = 200 + ((width - 220) * (place + 0.5)) / 8;
      for (let i = 0; i < 24; i++) steps.push(['zoom', 0.7, x]);
      for (let i = 0; i < 10; i++) steps.push(['pan', i % 2 ? -120 : 150]);
      steps.push(['scroll', 60]);
      for (let i = 0; i < 24; i++) steps.push(['zoom', 1 / 0.7, x]);
      for (let i = 0; i < 6; i++) steps.push(['pan', 200]);
      steps.push(['scroll', -60]);
    }
    const run = async (levelOfDetail) => {
      view.fit();
      view.levelOfDetail = levelOfDetail;
      view.forceRaster = true;
      const times = [];
      detail = [];
      for (const [kind, a, b] of steps) {
        await new Promise((r) => requestAnimationFrame(r));
        const t0 = performance.now();
        if (kind === 'zoom') view.zoom(a, b);
        else if (kind === 'pan') view.panPx(a);
        else view.setView(view.viewStart, view.viewEnd, view.scrollTop + a);
        view.render();
        times.push(performance.now() - t0);
        const st = view.stats;
        detail.push([
          times[times.length - 1],
          kind,
          view.viewEnd - view.viewStart,
          st.blocks,
          st.labels,
          st.flows,
          st.flowsHidden,
        ]);
      }
      view.levelOfDetail = true;
      view.forceRaster = false;
      return times;
    };
    let detail = [];
    // Each sequence runs PASSES times; a frame's time is its fastest pass, so other programs competing for
    // the CPU do not count as drawing time.
    const best = async (levelOfDetail) => {
      let times;
      for (let pass = 0; pass < PASSES; pass++) {
        const t = await run(levelOfDetail);
        times = times ? times.map((x, i) => Math.min(x, t[i])) : t;
      }
      return times;
    };
    const lod = await best(true);
    const slowest = detail.sort((a, b) => b[0] - a[0]).slice(0, 12);
    const naive = await best(false);
    let showFramesMs;
    if (window.flagprofTimeline.model.profilerFrameCount > 0) {
      view.fit();
      const t0 = performance.now();
      window.flagprofTimeline.showProfilerFrames(true);
      view.render();
      showFramesMs = performance.now() - t0;
      window.flagprofTimeline.showProfilerFrames(false);
    }
    return {
      firstFrameMs,
      firstFrameWallMs,
      transferMs,
      levelsMs,
      lod,
      naive,
      frames: steps.length,
      slowest,
      showFramesMs,
    };
  }, passes);
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

const scenarios = [
  {
    name: `synthetic ${(sliceTarget / 1e6).toFixed(1)}M slices`,
    make: () => data.syntheticPayload(sliceTarget),
  },
  { name: 'tracelens_h100_owlv2_large (real)', make: () => data.tracePayload(largest) },
  {
    name: `synthetic ${(sliceTarget / 1e6).toFixed(1)}M slices, session frames`,
    make: () => data.sessionPayload(sliceTarget),
  },
];

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: FLAGS });
const results = [];
try {
  for (const scenario of scenarios) {
    const { buffer, slices, encodeMs, openMs: scenarioOpenMs } = await scenario.make();
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const r = await drive(page, buffer);
    await page.close();
    if (process.env.BENCH_UI_DETAIL) console.log(scenario.name, JSON.stringify(r.slowest));
    results.push({
      scenario: scenario.name,
      slices,
      payloadMB: buffer.byteLength / 2 ** 20,
      encodeMs,
      openMs: scenarioOpenMs,
      firstFrameMs: r.firstFrameMs,
      firstFrameWallMs: r.firstFrameWallMs,
      // From the user's action: the host's reading, analysis and payload, the transfer, the page's first frame.
      fromOpeningMs: scenarioOpenMs + encodeMs + r.transferMs + r.firstFrameWallMs,
      levelsMs: r.levelsMs,
      frames: r.frames,
      p50: percentile(r.lod, 0.5),
      p95: percentile(r.lod, 0.95),
      max: Math.max(...r.lod),
      naiveP50: percentile(r.naive, 0.5),
      naiveP95: percentile(r.naive, 0.95),
      showFramesMs: r.showFramesMs,
    });
  }
} finally {
  await browser.close();
}

const f = (x, d = 1) => x.toFixed(d);
const lines = [
  '| profile | slices | payload MB | host read + analysis ms | host encode ms | first frame from opening ms | first frame from data ms | all LOD levels ms | frames | p50 ms | p95 ms | max ms | no-LOD p50 / p95 ms | p95 vs no-LOD | show profiler frames ms |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...results.map(
    (r) =>
      `| ${r.scenario} | ${r.slices.toLocaleString('en-US')} | ${f(r.payloadMB)} | ${f(r.openMs, 0)} | ${f(r.encodeMs, 0)} | ${f(r.fromOpeningMs, 0)} | ${f(r.firstFrameMs, 0)} | ${f(r.levelsMs, 0)} | ${r.frames} | ${f(r.p50, 2)} | ${f(r.p95, 2)} | ${f(r.max, 1)} | ${f(r.naiveP50, 1)} / ${f(r.naiveP95, 1)} | ${f(r.p95 / r.naiveP95, 2)}x | ${r.showFramesMs === undefined ? '–' : f(r.showFramesMs, 0)} |`,
  ),
];
console.log(lines.join('\n'));
const synthetic = results[0];
const real = results[1];
console.log(
  `\ntargets: p95 at ${(sliceTarget / 1e6).toLocaleString('en-US')}M slices ${f(synthetic.p95, 2)} ms (<= 16.7: ${synthetic.p95 <= 16.7 ? 'met' : 'NOT met'}); ` +
    `first frame of the largest real trace ${f(real.fromOpeningMs, 0)} ms from opening it (<= 1500: ${real.fromOpeningMs <= 1500 ? 'met' : 'NOT met'}; ${f(real.firstFrameMs, 0)} ms of it after its data arrived)`,
);
writeFileSync(path.join(out, 'ui-bench.json'), JSON.stringify(results, null, 1));
