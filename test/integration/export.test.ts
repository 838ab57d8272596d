/**
 * flagprof export of a real agent-mode session: `flagprof profile --mode agent` runs a torch script that launches
 * device work through the fake CUPTI library (test/fake-cupti), so the device activity lives only in the session's
 * capture.fpc. Exported, the one file holds it: the importer alone (no capture, no sites.json) finds every kernel
 * under the op that launched it and every op on its line, and Chrome DevTools' Performance panel opens it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { BrowserContext } from 'playwright-core';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import type { Analysis } from '../../extension/analysis/types';
import { openProfile } from '../../extension/capture/open';
import { importTrace } from '../../extension/import/kineto';
import { isDeviceKind, isOpKind, type Profile } from '../../extension/model/profile';
import { CHROMIUM, CHROMIUM_FLAGS } from '../helpers/browser';
import { buildCli, lines, runCli, type CliResult } from '../helpers/cli';
import { ensureFakeCupti, ensureNativeBuilt } from '../helpers/native';
import { ARTIFACTS, PYTHON, ROOT } from '../helpers/paths';

const SCRIPT = path.join(ROOT, 'test', 'fixtures', 'export', 'launches.py');

const work = mkdtempSync(path.join(os.tmpdir(), 'flagprof-export-session-'));
const session = path.join(work, 'session');
const exported = path.join(work, 'run.json.gz');

let run: CliResult;
let exporting: CliResult;
let original: Analysis;
let reimported: Analysis;

beforeAll(async () => {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run scripts/setup-python.sh first`);
  buildCli();
  ensureNativeBuilt();
  const env = { FLAGOS_TRACER_LIBRARY: ensureFakeCupti() };
  run = await runCli(['profile', '--mode', 'agent', '--out', session, '--python', PYTHON, '--', SCRIPT], {
    env,
    timeoutMs: 300_000,
  });
  expect(run.code, run.stderr).toBe(0);
  exporting = await runCli(['export', session, '--out', exported], { timeoutMs: 120_000 });
  original = analyze((await openProfile(session)).profile);
  // The exported file on its own: importTrace alone, no capture.fpc, no sites.json.
  reimported = analyze(await importTrace(exported));
}, 420_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

function deviceSlices(profile: Profile): number[] {
  const out: number[] = [];
  for (let i = 0; i < profile.slices.length; i++) if (isDeviceKind(profile.slices.kind[i])) out.push(i);
  return out;
}

/** The op each device event is linked to, by name, in slice order. */
function launchingOps(analysis: Analysis): string[] {
  const { profile } = analysis;
  return deviceSlices(profile).map((i) => `${profile.nameOf(i)} <- ${profile.nameOf(analysis.opOf[i])}`);
}

describe('flagprof export of an agent-mode session', () => {
  it('was a session whose device activity lives only in capture.fpc', () => {
    expect(existsSync(path.join(session, 'capture.fpc'))).toBe(true);
    const trace = gunzipSync(readFileSync(path.join(session, 'trace.json.gz'))).toString('utf8');
    expect(trace).not.toMatch(/"cat":\s*"kernel"/);
    expect(deviceSlices(original.profile).length).toBe(3 + 3 + 1); // 3 GEMMs, 3 copies, 1 fill
  });

  it('prints one line saying what was written', () => {
    expect(exporting.code, exporting.stderr).toBe(0);
    const written = lines(exporting.stdout);
    expect(written).toHaveLength(1);
    const match =
      /^flagprof: wrote (.+) \(.+\): ([\d,]+) events, (\d+) device events, (\d+) flows \((\d+) flow events\)$/.exec(
        written[0],
      );
    expect(match, written[0]).not.toBeNull();
    const [, file, , devices, flows] = match!;
    expect(file).toBe(exported);
    expect(Number(devices)).toBe(deviceSlices(original.profile).length);
    expect(Number(flows)).toBe(original.flows.paired);
  });

  it('holds the device kernels, each linked to the op that launched it, read back without the capture', () => {
    const devices = deviceSlices(reimported.profile);
    expect(devices.length).toBe(deviceSlices(original.profile).length);
    expect(reimported.deviceEvents).toEqual(original.deviceEvents);
    expect(reimported.deviceEvents.linkedToOp).toBe(devices.length);
    expect(launchingOps(reimported)).toEqual(launchingOps(original));
    const { profile } = reimported;
    for (const i of devices) {
      const runtime = reimported.runtimeOf[i];
      expect(runtime, profile.nameOf(i)).toBeGreaterThanOrEqual(0);
      expect(profile.slices.correlation[runtime]).toBe(profile.slices.correlation[i]);
      const op = profile.nameOf(reimported.opOf[i]);
      // What the script's ranges launched: the GEMM in fake::matmul, the copy in fake::to_cpu, the fill in fake::zero.
      if (profile.nameOf(i).startsWith('void cutlass::Kernel')) expect(op).toBe('fake::matmul');
      else if (profile.nameOf(i).startsWith('Memcpy')) expect(op).toBe('fake::to_cpu');
      else expect(op).toBe('fake::zero');
    }
    expect(reimported.flows.byCategory.ac2g).toEqual({ paired: devices.length, startOnly: 0, finishOnly: 0 });
  });

  it('writes each op’s call site as args, and its lines read back from the Call stack', () => {
    expect(expectSitesAsArgs(original.profile, exported)).toBeGreaterThan(0);
    const lineOf = (a: Analysis) =>
      a.lines.map((l) => `${path.basename(l.file)}:${l.line} device ${l.deviceSelfNs} ns, ${l.ops} ops`);
    expect(lineOf(reimported)).toEqual(lineOf(original));
    expect(lineOf(reimported).some((l) => l.startsWith('launches.py:'))).toBe(true);
  });

  it('keeps the session’s facts under "flagprof" and the capture’s device as deviceProperties', () => {
    const { metadata } = reimported.profile;
    expect((metadata.flagprof as { session: { mode: { chosen: string } } }).session.mode.chosen).toBe(
      'agent',
    );
    expect((metadata.flagprof as { capture: { vendor: string } }).capture.vendor).toBe('cupti');
    expect(metadata.deviceProperties).toEqual([
      expect.objectContaining({ id: 0, numSms: expect.any(Number) as number }),
    ]);
    expect(metadata.distributedInfo).toEqual({ rank: 0 });
  });

  it('refuses bad input in one line with exit code 2', async () => {
    const cases = [
      ['export', session],
      ['export', path.join(work, 'no-such-session'), '--out', path.join(work, 'x.json')],
      ['export', session, '--out', path.join(session, 'trace.json.gz')],
      ['export', session, '--out', path.join(session, 'session.json')],
      ['export', session, '--out', path.join(work, 'x.txt')],
      ['export', session, '--out', path.join(work, 'x.json'), '--rank', 'two'],
    ];
    const record = readFileSync(path.join(session, 'session.json'));
    for (const args of cases) {
      const result = await runCli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(lines(result.stderr), args.join(' ')).toHaveLength(1);
      expect(result.stderr).toMatch(/^flagprof: /);
    }
    expect(existsSync(path.join(work, 'x.json'))).toBe(false);
    expect(readFileSync(path.join(session, 'session.json')).equals(record)).toBe(true);
  });
});

describe('flagprof export of a training session', () => {
  const trainSession = path.join(work, 'train');
  const trainExport = path.join(work, 'train.json');
  let before: Analysis;
  let after: Analysis;

  beforeAll(async () => {
    const train = path.join(ROOT, 'examples', 'gpt', 'train.py');
    const profiled = await runCli(
      ['profile', '--out', trainSession, '--python', PYTHON, '--', train, '--steps', '2'],
      { timeoutMs: 300_000 },
    );
    expect(profiled.code, profiled.stderr).toBe(0);
    const written = await runCli(['export', trainSession, '--out', trainExport], { timeoutMs: 120_000 });
    expect(written.code, written.stderr).toBe(0);
    before = analyze((await openProfile(trainSession)).profile);
    after = analyze(await importTrace(trainExport));
  }, 420_000);

  it('keeps every source line’s CPU time and ops, read back without sites.json', () => {
    const lineOf = (a: Analysis) =>
      a.lines.map(
        (l) =>
          `${l.file}:${l.line} ${l.kind ?? 'exact'} self ${l.cpuSelfNs} total ${l.cpuTotalNs} ns, ${l.ops} ops`,
      );
    expect(lineOf(after)).toEqual(lineOf(before));
    expect(before.lines.length).toBeGreaterThan(10);
  });

  it('reads each op’s call site back whole: the expression’s span, its function and kind', () => {
    const original = before.profile.sites;
    expect(original?.size).toBeGreaterThan(100);
    let spans = 0;
    for (const [externalId, chain] of original ?? []) {
      const back = after.profile.sites?.get(externalId);
      expect(back?.[0], `op ${externalId}`).toEqual(chain[0]);
      expect(back?.length).toBe(chain.every((f) => f.kind !== 'function') ? chain.length : 1);
      if (chain[0].endColumn !== undefined) spans++;
    }
    // Python >= 3.11 records every expression's span: the columns must have survived the round trip.
    expect(spans).toBeGreaterThan(100);
  });

  it('writes the backward ops’ site as the line that called backward(), saying so', () => {
    expect(expectSitesAsArgs(before.profile, trainExport)).toBeGreaterThan(100);
    const backward = before.lines.find((l) => l.kind === 'backward');
    expect(backward?.file).toBe(path.join(ROOT, 'examples', 'gpt', 'train.py'));
    const events = exportedSlices(trainExport);
    const charged = events.filter((e) => e.args?.['Call site kind'] === 'backward');
    expect(charged.length).toBeGreaterThan(0);
    for (const event of charged) expect(String(event.args?.['Call site'])).toMatch(/train\.py:\d+(:\d+)?$/);
  });
});

describe('the exported file in Chrome DevTools’ Performance panel', () => {
  let context: BrowserContext | undefined;
  afterAll(async () => {
    await context?.close();
  });

  it('loads the trace: every event, the device stream with its kernels, no error', async () => {
    const profileDir = mkdtempSync(path.join(work, 'chromium-'));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      args: [...CHROMIUM_FLAGS, '--remote-debugging-port=0'],
      viewport: { width: 1400, height: 900 },
    });
    // The DevTools front end is served by the browser's own debugging server; the trace is fetched from the
    // same origin (its CSP allows no other), answered here.
    const port = readFileSync(path.join(profileDir, 'DevToolsActivePort'), 'utf8').split('\n')[0];
    const origin = `http://127.0.0.1:${port}`;
    const page = context.pages()[0] ?? (await context.newPage());
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const traceUrl = `${origin}/flagprof/run.json.gz`;
    await page.route(traceUrl, (route) => route.fulfill({ status: 200, body: readFileSync(exported) }));
    await page.goto(`${origin}/devtools/trace_app.html?loadTimelineFromURL=${encodeURIComponent(traceUrl)}`);
    const loaded = await loadedTrace(page);
    const events = (
      JSON.parse(gunzipSync(readFileSync(exported)).toString('utf8')) as { traceEvents: unknown[] }
    ).traceEvents.length;
    expect(loaded.events).toBe(events);
    const devices = deviceSlices(reimported.profile).length;
    expect(loaded.threads).toContainEqual({ pid: 0, tid: 7, name: 'stream 7', entries: devices });
    await showLaunch(page);
    await page.screenshot({ path: path.join(ARTIFACTS, 'export-devtools.png') });
    expect(errors).toEqual([]);
  }, 120_000);
});

/**
 * For the screenshot: the first-run dialog and the sidebar closed, the CPU thread and the device stream opened,
 * and the view zoomed on the op of the last copy to the host.
 */
async function showLaunch(page: import('playwright-core').Page): Promise<void> {
  // Newer DevTools open a keyboard-shortcuts dialog over the toolbar on first run: Escape closes it. The clicks only
  // tidy the screenshot, so one that something still covers is skipped rather than failing the load check.
  await page.keyboard.press('Escape');
  for (const name of ['Close', 'Hide sidebar']) {
    const buttons = page.getByRole('button', { name, exact: true });
    for (let k = 0; k < (await buttons.count()); k++) {
      if (!(await buttons.nth(k).isVisible())) continue;
      await buttons
        .nth(k)
        .click({ timeout: 3000 })
        .catch(() => undefined);
      break;
    }
  }
  await page.evaluate(`(async () => {
    const timeline = await import('/devtools/panels/timeline/timeline.js');
    const panel = timeline.TimelinePanel.TimelinePanel.instance();
    const chart = panel.getFlameChart().getMainFlameChart();
    chart.timelineData().groups.forEach((group, index) => {
      if (!group.expanded && !/^(Spans|PyTorch Profiler)/.test(group.name)) chart.toggleGroupExpand(index);
    });
    const parsed = panel.getParsedTraceForLayoutTests();
    for (const process of (parsed.data ?? parsed).Renderer.processes.values())
      for (const thread of process.threads.values()) {
        const ops = thread.entries.filter((entry) => entry.name === 'fake::to_cpu');
        if (ops.length > 0) panel.zoomEvent(ops[ops.length - 1]);
      }
  })()`);
  await page.waitForTimeout(800);
}

interface ExportedEvent {
  ph: string;
  name: string;
  args?: Record<string, unknown>;
}

/** The exported file's slices (ph X and i), in slice order: they are written in it, after the M events. */
function exportedSlices(file: string): ExportedEvent[] {
  const bytes = readFileSync(file);
  const text = (bytes[0] === 0x1f ? gunzipSync(bytes) : bytes).toString('utf8');
  return (JSON.parse(text) as { traceEvents: ExportedEvent[] }).traceEvents.filter(
    (e) => e.ph === 'X' || e.ph === 'i',
  );
}

/** Every op with a call site has it in its args (file:line:column, and the kind where not exact); returns how many. */
function expectSitesAsArgs(profile: Profile, file: string): number {
  const events = exportedSlices(file);
  expect(events.length).toBe(profile.slices.length);
  let withSite = 0;
  for (let i = 0; i < profile.slices.length; i++) {
    if (!isOpKind(profile.slices.kind[i])) continue;
    expect(events[i].name).toBe(profile.nameOf(i));
    const frame = profile.sites?.get(profile.slices.externalId[i])?.[0];
    const args = events[i].args ?? {};
    if (!frame) {
      expect(args['Call site']).toBeUndefined();
      continue;
    }
    withSite++;
    const column = frame.column === undefined ? '' : `:${frame.column}`;
    expect(args['Call site']).toBe(`${frame.file}:${frame.line}${column}`);
    expect(args['Call site kind']).toBe(frame.kind);
  }
  return withSite;
}

interface LoadedTrace {
  events: number;
  threads: { pid: unknown; tid: unknown; name: string; entries: number }[];
}

/** What the Performance panel parsed, once it has a trace: its raw events and threads with their entries. */
async function loadedTrace(page: import('playwright-core').Page): Promise<LoadedTrace> {
  const read = `(async () => {
    const timeline = await import('/devtools/panels/timeline/timeline.js');
    const panel = timeline.TimelinePanel.TimelinePanel.instance();
    if (!panel.hasActiveTrace()) return null;
    const parsed = panel.getParsedTraceForLayoutTests();
    const threads = [];
    for (const [pid, process] of (parsed.data ?? parsed).Renderer.processes)
      for (const [tid, thread] of process.threads)
        threads.push({ pid, tid, name: thread.name, entries: thread.entries.length });
    return { events: panel.getTraceEngineRawTraceEventsForLayoutTests().length, threads };
  })()`;
  for (const started = Date.now(); Date.now() - started < 90_000;) {
    const loaded = (await page.evaluate(read).catch(() => null)) as LoadedTrace | null;
    if (loaded) return loaded;
    await page.waitForTimeout(250);
  }
  throw new Error('the Performance panel showed no trace within 90 s');
}
