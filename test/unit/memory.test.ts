/**
 * Memory samples and their analysis on real traces with torch's profile_memory events, every expectation computed
 * here from the trace's own JSON (read independently of the importer).
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { analyzeMemory } from '../../extension/analysis/memory';
import { buildSummary } from '../../extension/analysis/summary';
import { importTrace } from '../../extension/import/kineto';
import { deviceName } from '../../extension/model/profile';
import { rawTraceEvents, ROOT, tracePath } from '../helpers/traces';

interface RawEvent {
  ph?: string;
  cat?: string;
  name?: string;
  pid?: number | string;
  tid?: number | string;
  ts?: number;
  dur?: number;
  args?: Record<string, number>;
}

const memoryEvents = (events: RawEvent[]) => events.filter((e) => e.name === '[memory]');
const deviceOf = (e: RawEvent) => deviceName(e.args!['Device Type'], e.args!['Device Id']);

async function load(name: string) {
  const analysis = analyze(await importTrace(path.join(ROOT, tracePath(name))));
  return { analysis, memory: analyzeMemory(analysis)! };
}

const BERT = 'tracelens_h100_bert_small.trace.json.gz';
const RESNET_2021 = 'kineto_tbplugin_2021_v100_resnet50_w0.pt.trace.json.gz';

describe('memory samples (import)', () => {
  it('every [memory] event becomes a sample with its device, bytes and the allocator totals', async () => {
    const raw = memoryEvents(rawTraceEvents<RawEvent>(BERT));
    const profile = await importTrace(path.join(ROOT, tracePath(BERT)));
    const samples = profile.memory!;
    expect(samples.length).toBe(raw.length);
    const byTime = [...raw].sort((a, b) => a.ts! - b.ts!);
    for (let i = 0; i < samples.length; i++) {
      const e = byTime[i];
      expect(samples.bytes[i]).toBe(e.args!.Bytes);
      expect(samples.allocated[i]).toBe(e.args!['Total Allocated']);
      expect(samples.reserved[i]).toBe(e.args!['Total Reserved']);
      expect(samples.addr[i]).toBe(e.args!.Addr);
      expect(deviceName(samples.deviceType[i], samples.deviceId[i])).toBe(deviceOf(e));
    }
  });

  it('each sample names the innermost cpu_op or user_annotation running on its thread', async () => {
    const events = rawTraceEvents<RawEvent>(BERT);
    const ops = events.filter((e) => e.ph === 'X' && (e.cat === 'cpu_op' || e.cat === 'user_annotation'));
    const profile = await importTrace(path.join(ROOT, tracePath(BERT)));
    const samples = profile.memory!;
    const byTime = [...memoryEvents(events)].sort((a, b) => a.ts! - b.ts!);
    let named = 0;
    for (let i = 0; i < samples.length; i++) {
      const e = byTime[i];
      const around = ops
        .filter((o) => o.tid === e.tid && o.pid === e.pid && o.ts! <= e.ts! && e.ts! < o.ts! + o.dur!)
        .sort((a, b) => a.dur! - b.dur!);
      const op = samples.op[i];
      if (around.length === 0) {
        expect(op).toBe(-1);
        continue;
      }
      named++;
      expect(profile.nameOf(op)).toBe(around[0].name);
      expect(profile.slices.dur[op]).toBeCloseTo(around[0].dur! * 1000, 0);
    }
    expect(named).toBe(samples.length);
  });

  it('a trace without profile_memory has no samples, and no memory section', async () => {
    const profile = await importTrace(path.join(ROOT, tracePath('hta_a100_simple_add.trace.json.gz')));
    expect(profile.memory).toBeUndefined();
    const analysis = analyze(profile);
    expect(analyzeMemory(analysis)).toBeUndefined();
    expect(buildSummary(analysis, { memory: true, steps: true }).memory).toBeUndefined();
  });
});

describe('memory analysis', () => {
  it('peak allocated and reserved per device are the highest totals the allocator reported, and when', async () => {
    const raw = memoryEvents(rawTraceEvents<RawEvent>(BERT));
    const { analysis, memory } = await load(BERT);
    expect(memory.devices.map((d) => d.device).sort()).toEqual(['cpu', 'cuda:0']);
    for (const device of memory.devices) {
      const mine = raw.filter((e) => deviceOf(e) === device.device);
      const peak = Math.max(...mine.map((e) => e.args!['Total Allocated']));
      expect(device.totals).toBe('trace');
      expect(device.samples).toBe(mine.length);
      expect(device.peakAllocatedBytes).toBe(peak);
      const first = mine.filter((e) => e.args!['Total Allocated'] === peak).sort((a, b) => a.ts! - b.ts!)[0];
      const origin = Number(analysis.profile.originNs) / 1000;
      const baseUs = Number(analysis.profile.metadata.baseTimeNanoseconds ?? 0) / 1000;
      expect(device.peakAllocatedNs / 1000 + origin - baseUs).toBeCloseTo(first.ts!, 0);
      expect(device.allocatedBytes).toBe(
        mine.filter((e) => e.args!.Bytes > 0).reduce((s, e) => s + e.args!.Bytes, 0),
      );
    }
    const cuda = memory.devices.find((d) => d.device === 'cuda:0')!;
    expect(cuda.peakReservedBytes).toBe(
      Math.max(...raw.filter((e) => deviceOf(e) === 'cuda:0').map((e) => e.args!['Total Reserved'])),
    );
    // The CPU allocator keeps no pool: no reserved peak is claimed for it.
    expect(memory.devices.find((d) => d.device === 'cpu')!.peakReservedBytes).toBeUndefined();
  });

  it('per line: what the lines and the unattributed rest allocated and freed adds up to each device', async () => {
    const { analysis, memory } = await load(BERT);
    expect(memory.lines.length).toBeGreaterThan(3);
    for (const device of memory.devices) {
      const rows = memory.lines.filter((l) => l.device === device.device);
      const rest = memory.unattributed.find((u) => u.device === device.device);
      const allocated = rows.reduce((s, l) => s + l.allocatedBytes, 0) + (rest?.allocatedBytes ?? 0);
      const freed = rows.reduce((s, l) => s + l.freedBytes, 0) + (rest?.freedBytes ?? 0);
      expect(allocated).toBe(device.allocatedBytes);
      expect(freed).toBe(device.freedBytes);
      let held = 0;
      for (const l of rows) {
        expect(l.netBytes).toBe(l.allocatedBytes - l.freedBytes);
        expect(l.atPeakBytes).toBeGreaterThanOrEqual(0);
        expect(l.atPeakBytes).toBeLessThanOrEqual(l.allocatedBytes);
        held += l.atPeakBytes!;
      }
      expect(held).toBeLessThanOrEqual(device.peakAllocatedBytes);
    }
    for (let k = 1; k < memory.lines.length; k++)
      expect(memory.lines[k - 1].allocatedBytes).toBeGreaterThanOrEqual(memory.lines[k].allocatedBytes);
    // The lines are the ones every view attributes (function level on an imported trace).
    const top = analysis.lines[memory.lines[0].line];
    expect(top.file).toMatch(/\.py$/);
    expect(top.kind).toBe('function');
  });

  it('a line allocated what its ops allocated on that device: the samples under the line’s ops', async () => {
    const events = rawTraceEvents<RawEvent>(BERT);
    const { analysis, memory } = await load(BERT);
    const profile = analysis.profile;
    const samples = profile.memory!;
    const row = memory.lines[0];
    let expected = 0;
    for (let i = 0; i < samples.length; i++) {
      const op = samples.op[i];
      const device = deviceName(samples.deviceType[i], samples.deviceId[i]);
      if (op < 0 || analysis.lineOf[op] !== row.line || device !== row.device) continue;
      if (samples.bytes[i] > 0) expected += samples.bytes[i];
    }
    expect(row.allocatedBytes).toBe(expected);
    // ... and those bytes are events of the trace: sizes as written there.
    const sizes = new Set(memoryEvents(events).map((e) => e.args!.Bytes));
    for (let i = 0; i < samples.length; i++) expect(sizes.has(samples.bytes[i])).toBe(true);
  });

  it('a 2021 trace (Bytes only): peaks are the running sum of the window’s deltas, nothing claimed at the peak', async () => {
    const raw = memoryEvents(rawTraceEvents<RawEvent>(RESNET_2021)).sort((a, b) => a.ts! - b.ts!);
    const { memory } = await load(RESNET_2021);
    for (const device of memory.devices) {
      let running = 0;
      let peak = Number.NEGATIVE_INFINITY;
      for (const e of raw) {
        if (deviceOf(e) !== device.device) continue;
        running += e.args!.Bytes;
        peak = Math.max(peak, running);
      }
      expect(device.totals).toBe('deltas');
      expect(device.peakAllocatedBytes).toBe(peak);
      expect(device.peakReservedBytes).toBeUndefined();
    }
    expect(memory.devices.map((d) => d.device).sort()).toEqual(['cpu', 'cuda:0']);
    for (const line of memory.lines) expect(line.atPeakBytes).toBeUndefined();
    // Its lines come from the trace's own Call stack frames.
    expect(memory.lines[0].allocatedBytes).toBeGreaterThan(0);
  });

  it('the summary document carries memory only when asked (the stable core stays as it was)', async () => {
    const { analysis } = await load(BERT);
    const core = buildSummary(analysis);
    expect(core).not.toHaveProperty('memory');
    expect(core).not.toHaveProperty('steps');
    const full = buildSummary(analysis, { memory: true });
    const cuda = full.memory!.devices.find((d) => d.device === 'cuda:0')!;
    expect(cuda.peak_allocated_bytes).toBe(
      Math.max(...memoryEvents(rawTraceEvents<RawEvent>(BERT)).map((e) => e.args!['Total Allocated'])),
    );
    expect(full.memory!.lines[0]).toMatchObject({ kind: 'function', device: 'cuda:0' });
    expect({ ...full, memory: undefined }).toEqual({ ...core, memory: undefined });
  });
});
