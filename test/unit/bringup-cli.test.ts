/** The bring-up pieces without VS Code: session loading, the markdown report, and the three CLI commands. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { loadBringup } from '../../extension/bringup/load';
import { buildMarkdownReport } from '../../extension/bringup/report';
import { baselineCommand } from '../../extension/cli/baseline';
import { checkCommand } from '../../extension/cli/check';
import { diagnosticsCommand } from '../../extension/cli/diagnostics';
import { UserError } from '../../extension/import/errors';
import { parityTrace, writeSessionFolder } from '../fixtures/checks-trace';

const dir = mkdtempSync(path.join(tmpdir(), 'flagprof-bringup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const log = readFileSync(path.resolve(__dirname, '../fixtures/bringup/cupti-session.log'), 'utf8')
  .trimEnd()
  .split('\n');
const UPSTREAM_BASELINE = path.resolve(__dirname, '../../../shared/reference/profiler_cuda_baseline.json');

async function capture(run: () => Promise<number>): Promise<{ code: number; out: string }> {
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    return { code: await run(), out };
  } finally {
    spy.mockRestore();
  }
}
afterEach(() => vi.restoreAllMocks());

describe('a session folder', () => {
  const session = path.join(dir, 'session-broken');
  writeSessionFolder(session, { flowsOnTorchId: true }, log);

  it('loads header, checks and diagnostics together', async () => {
    const model = await loadBringup(session);
    expect(model.header).toMatchObject({
      mode: 'kineto',
      modeReason: 'torch has a PrivateUse1 backend (flagos) with a profiler plugin',
      tracer: 'CUPTI (CUDA / PPU)',
      library: '/usr/local/cuda-12.8/extras/CUPTI/lib64/libcupti.so.12',
      apiVersion: '24',
      torch: '2.13.0',
    });
    expect(model.checks?.results.find((r) => r.id === 'P2')?.status).toBe('fail');
    expect(model.summary).toMatchObject({ eventsDrained: 52, linked: 0, candidates: 24, resolver: 'EMPTY' });
    expect(model.diagnostics.find((d) => d.code === 'A12')?.line).toBe(24);
  });

  it('skips the device checks of a CPU-only capture, with the reason', async () => {
    const cpu = path.join(dir, 'session-cpu');
    writeSessionFolder(cpu, { noMemcpy: true }, [], {
      mode: { chosen: 'cpu', reason: 'no device support in this torch' },
    });
    const model = await loadBringup(cpu);
    const p1 = model.checks!.results.find((r) => r.id === 'P1')!;
    expect(p1).toMatchObject({
      status: 'skip',
      summary: 'CPU-only capture: mode cpu (no device support in this torch)',
    });
    expect(model.checks!.results.find((r) => r.id === 'K1')!.status).toBe('pass');
  });

  it("uses session.json's profiling window when the trace has no Trace span", async () => {
    const folder = path.join(dir, 'session-window');
    // The fixture's events run from 1_785_000_000_001_000 µs for about 7 ms.
    writeSessionFolder(folder, { noTraceSpan: true }, [], {
      window: { startNs: 1_785_000_000_000_000_000, endNs: 1_785_000_000_100_000_000, captured: true },
    });
    const checks = (await loadBringup(folder, { platform: 'metax' })).checks!;
    expect(checks.window?.source).toBe('session.json profiling window');
    expect(checks.results.find((r) => r.id === 'P7')).toMatchObject({ status: 'pass' });
    const early = path.join(dir, 'session-window-late');
    writeSessionFolder(early, { noTraceSpan: true }, [], {
      window: { startNs: 1_785_000_000_003_000_000, endNs: 1_785_000_000_100_000_000 },
    });
    const p7 = (await loadBringup(early, { platform: 'metax' })).checks!.results.find((r) => r.id === 'P7')!;
    expect(p7.status).toBe('fail');
    expect(p7.counts.startEarly).toBeGreaterThan(0);
  });

  it('gives a markdown report with the failures, their fixes, evidence and the log', async () => {
    const md = buildMarkdownReport(await loadBringup(session));
    expect(md).toMatch(/^# FlagOS bring-up report/);
    expect(md).toContain(
      '- Session: mode kineto (torch has a PrivateUse1 backend (flagos) with a profiler plugin)',
    );
    expect(md).toContain('### ❌ P2 Flow arrows are paired');
    expect(md).toMatch(/\*\*Fix:\*\* .*keyed on the torch id/);
    expect(md).toContain('| cat | name | ts (µs) | dur (µs) | correlation | External id | note |');
    expect(md).toContain('**adaptor A12** (line 24)');
    expect(md).toContain('Counts: events drained 52 · linked 0/24 (resolver EMPTY)');
    expect(md).toContain('<details><summary>FLAGOS_TRACE log</summary>');
  });
});

describe('flagprof check', () => {
  it('exits 1 when a required check fails and prints the fix', async () => {
    const file = path.join(dir, 'mangled.json');
    writeFileSync(file, parityTrace({ mangledKernels: true }));
    const { code, out } = await capture(() => checkCommand.run([file, '--platform', 'metax']));
    expect(code).toBe(1);
    expect(out).toMatch(/^FAIL {3}P5 Kernel names are demangled/m);
    expect(out).toContain('fix: Demangle kernel names');
  });

  it('exits 0 on a correct trace, with --json, against upstream baseline file as it is', async () => {
    const file = path.join(dir, 'good.json');
    writeFileSync(file, parityTrace());
    const { code, out } = await capture(() =>
      checkCommand.run([file, '--json', '--baseline', UPSTREAM_BASELINE, '--platform', 'metax']),
    );
    expect(code).toBe(0);
    const report = JSON.parse(out);
    expect(report.baseline.source).toBe(UPSTREAM_BASELINE);
    expect(report.totals).toEqual({ pass: 22, fail: 0, skip: 0, info: 0, requiredFailed: 0 });
  });

  it('one-line errors for bad input', async () => {
    await expect(checkCommand.run([])).rejects.toThrow(UserError);
    await expect(checkCommand.run([path.join(dir, 'missing.json')])).rejects.toThrow(
      /missing.json: no such file or folder/,
    );
    const bad = path.join(dir, 'bad-baseline.json');
    writeFileSync(bad, '{"categories": []}');
    await expect(checkCommand.run([path.join(dir, 'good.json'), '--baseline', bad])).rejects.toThrow(
      /bad-baseline.json: not a profiler baseline/,
    );
  });

  it('reports an unreadable trace as a failed X1, exit 1', async () => {
    const file = path.join(dir, 'truncated.json');
    writeFileSync(file, parityTrace().slice(0, 300));
    const { code, out } = await capture(() => checkCommand.run([file]));
    expect(code).toBe(1);
    expect(out).toMatch(/FAIL {3}X1 The trace is valid JSON +the trace could not be read: .*truncated.json/);
  });
});

describe('flagprof diagnostics', () => {
  it('groups a plain stderr log by component and lifts the counts', async () => {
    const file = path.resolve(__dirname, '../fixtures/bringup/cupti-session.log');
    const { code, out } = await capture(() => diagnosticsCommand.run([file]));
    expect(code).toBe(0);
    expect(out).toContain(
      'events drained 52 · linked 0/24 (resolver EMPTY) · in window 13/13 · buffers requested 1, completed 1',
    );
    expect(out).toMatch(/^adaptor \(\d+\)$/m);
    expect(out).toMatch(/^ {2}error +A12 +line 24: kineto handed the plugin no linked-activity resolver/m);
  });

  it('reads a session folder as JSON', async () => {
    const { out } = await capture(() => diagnosticsCommand.run([path.join(dir, 'session-broken'), '--json']));
    const parsed = JSON.parse(out);
    expect(parsed.summary.tracer).toBe('cupti');
    expect(parsed.diagnostics.length).toBeGreaterThan(20);
  });
});

describe('flagprof baseline', () => {
  it('derives a baseline that check accepts', async () => {
    const trusted = path.join(dir, 'trusted.json');
    writeFileSync(trusted, parityTrace());
    const out = path.join(dir, 'baseline.json');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(await baselineCommand.run([trusted, '--out', out])).toBe(0);
    stderr.mockRestore();
    const b = JSON.parse(readFileSync(out, 'utf8'));
    expect(b.categories).toEqual([
      'Trace',
      'cpu_op',
      'gpu_memcpy',
      'gpu_memset',
      'kernel',
      'privateuse1_runtime',
    ]);
    expect(b.kernel_arg_keys).toHaveLength(13);
    expect(b.runtime_arg_keys).toEqual(['External id', 'cbid', 'correlation']);
    const file = path.join(dir, 'dropped-keys.json');
    writeFileSync(file, parityTrace({ dropKernelKeys: ['queued'] }));
    const { code, out: text } = await capture(() =>
      checkCommand.run([file, '--baseline', out, '--platform', 'metax']),
    );
    expect(code).toBe(1);
    expect(text).toMatch(/P3 Args keys are supersets of the baseline +kernel lacks queued/);
  });
});

describe('the view message', () => {
  it('keeps errors, warnings and info of a huge log and drops debug lines beyond the cap', async () => {
    const { toView } = await import('../../extension/bringup/view');
    const { MAX_VIEW_DIAGNOSTICS } = await import('../../extension/bringup/protocol');
    const lines = ['[flagos] kineto called processTrace with an EMPTY getLinkedActivity callback.'];
    for (let i = 0; i < MAX_VIEW_DIAGNOSTICS + 100; i++)
      lines.push('[flagos] toActivity: kind=0 -> activityType=5 name=k');
    const { bringupFromLog } = await import('../../extension/bringup/load');
    const view = toView(bringupFromLog('big.log', lines.join('\n')));
    expect(view.diagnostics).toHaveLength(MAX_VIEW_DIAGNOSTICS);
    expect(view.diagnosticsOmitted).toBe(101);
    expect(view.diagnostics[0].code).toBe('A12');
    expect(view.logTruncated).toBe(false);
  });
});
