/**
 * Counter tracks end to end on the host side: ph "C" events into the CounterTable, torch's `[memory]` events into
 * the memory rows (checked against the file's own events), the payload's columns and their downsampling, the
 * webview's rows, levels of detail and values; and CUDA graph launches grouped.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { importTrace, importTraceBytes } from '../../extension/import/kineto';
import {
  COUNTER_BUCKETS,
  MAX_COUNTER_POINTS,
  packTimeline,
  unpackTimeline,
  type TimelinePayload,
} from '../../extension/protocol';
import { downsampleSeries, encodeTimeline } from '../../extension/timeline/encode';
import { SliceKind } from '../../extension/model/profile';
import { TimelineModel } from '../../webview/model';
import { counterDetail, describeCounterAt, valueAt } from '../../webview/timeline/counters';
import { TrackLayout } from '../../webview/timeline/layout';
import { ROOT, TRACES, rawTraceEvents } from '../helpers/traces';

const enc = (text: string) => new TextEncoder().encode(text);

/** A small modern trace: a CPU op, a kernel, and counter events of two counters (one with an id). */
function counterTrace(counters: object[]): string {
  const events = [
    {
      ph: 'X',
      cat: 'cpu_op',
      name: 'aten::mm',
      pid: 10,
      tid: 11,
      ts: 1_000,
      dur: 50,
      args: { 'External id': 1 },
    },
    { ph: 'X', cat: 'kernel', name: 'gemm', pid: 0, tid: 7, ts: 1_010, dur: 20, args: { correlation: 5 } },
    ...counters,
    { ph: 'M', name: 'process_name', pid: 10, tid: 0, args: { name: 'trainer' } },
  ];
  return JSON.stringify({ schemaVersion: 1, traceEvents: events });
}

const COUNTERS = [
  { ph: 'C', name: 'power', pid: 10, ts: 1_005, args: { watts: 300, limit: 700 } },
  { ph: 'C', name: 'power', pid: 10, ts: 1_020, args: { watts: 450.5, limit: 700 } },
  { ph: 'C', name: 'power', pid: 10, ts: 1_012, args: { watts: 410 } },
  { ph: 'C', name: 'queue', id: 'q1', pid: 10, tid: 11, ts: 1_001, args: { depth: '3' } },
  {
    ph: 'C',
    name: 'queue',
    id: 'q1',
    pid: 10,
    tid: 11,
    ts: 1_030,
    args: { depth: 'full', note: null, x: {} },
  },
  { ph: 'C', name: 'queue', id: 'q1', pid: 10, tid: 11, ts: 1_040, args: { depth: 1, busy: true } },
];

describe('ph "C" events in the Kineto importer', () => {
  const profile = importTraceBytes('counters.json', enc(counterTrace(COUNTERS)));
  const counters = profile.counters!;
  const rows = () =>
    Array.from({ length: counters.length }, (_, i) => ({
      name: profile.strings.get(counters.name[i]),
      series: profile.strings.get(counters.series[i]),
      pid: profile.tracks[counters.track[i]].pid,
      tid: profile.tracks[counters.track[i]].tid,
      t: counters.timeNs(profile, i),
      value: counters.value[i],
    }));

  it('reads each args key as a series, in the order read, times in the slices frame', () => {
    expect(rows().filter((r) => r.name === 'power')).toEqual([
      { name: 'power', series: 'watts', pid: '10', tid: '', t: 5_000, value: 300 },
      { name: 'power', series: 'limit', pid: '10', tid: '', t: 5_000, value: 700 },
      { name: 'power', series: 'watts', pid: '10', tid: '', t: 20_000, value: 450.5 },
      { name: 'power', series: 'limit', pid: '10', tid: '', t: 20_000, value: 700 },
      { name: 'power', series: 'watts', pid: '10', tid: '', t: 12_000, value: 410 },
    ]);
    // The CPU op is t = 0; counters are not slices.
    expect(profile.slices.start[0]).toBe(0);
    expect(profile.slices.length).toBe(2);
  });

  it('names a counter with its id, places it by pid and tid, and reads numeric text as a number', () => {
    const queue = rows().filter((r) => r.name === 'queue q1');
    expect(queue.map((r) => [r.series, r.t, r.value, r.tid])).toEqual([
      ['depth', 1_000, 3, '11'],
      ['depth', 40_000, 1, '11'],
    ]);
  });

  it('skips values that are not numbers and says how many, once', () => {
    // "full", null, {} and true.
    expect(counters.skipped).toBe(4);
    const notes = profile.warnings.filter((w) => /counter value/.test(w.message));
    expect(notes.map((w) => w.message)).toEqual([
      '4 counter value(s) skipped: not a number (the first: "depth": "full")',
    ]);
  });

  it('reads the same in chunks as whole', () => {
    const chunked = importTraceBytes('counters.json', enc(counterTrace(COUNTERS)), { chunkSize: 7 });
    expect(chunked.counters!.length).toBe(counters.length);
    for (let i = 0; i < counters.length; i++) {
      expect(chunked.counters!.timeNs(chunked, i)).toBe(counters.timeNs(profile, i));
      expect(chunked.counters!.value[i]).toBe(counters.value[i]);
    }
  });

  it('keeps counter times right when a counter comes before every slice', () => {
    const early = importTraceBytes(
      'early.json',
      enc(counterTrace([{ ph: 'C', name: 'power', pid: 10, ts: 990, args: { watts: 1 } }])),
    );
    // The op (ts 1000) is t = 0 whatever the rebase did; the counter is 10 µs before it.
    expect(early.counters!.timeNs(early, 0) - early.slices.start[0]).toBe(-10_000);
  });

  it('leaves a trace without counters without a counter table', () => {
    expect(importTraceBytes('none.json', enc(counterTrace([]))).counters).toBeUndefined();
  });

  it('becomes counter rows in the payload: a row per counter and track, its series sorted by time', () => {
    const payload = encodeTimeline(profile, analyze(profile));
    const power = payload.header.counters.find((c) => c.name === 'power')!;
    expect(power).toMatchObject({ pid: '10', processName: 'trainer', unit: 'count' });
    expect(power.series.map((s) => s.name)).toEqual(['watts', 'limit']);
    const watts = power.series[0];
    const c = payload.columns;
    expect(Array.from(c.counterTs.subarray(watts.from, watts.to))).toEqual([5_000, 12_000, 20_000]);
    expect(Array.from(c.counterValue.subarray(watts.from, watts.to))).toEqual([300, 410, 450.5]);
    expect(watts).toMatchObject({ min: 300, max: 450.5, peakNs: 20_000, points: 3 });
    expect(payload.header.counters.map((t) => t.name)).toEqual(['power', 'queue q1']);
  });
});

/** A trace file's top-level object, read with JSON.parse. */
function rawDocument(name: string): { baseTimeNanoseconds?: number | string } {
  const bytes = fs.readFileSync(path.join(TRACES, name));
  return JSON.parse(gunzipSync(bytes).toString('utf8')) as { baseTimeNanoseconds?: number };
}

describe('the memory track of the H100 BERT trace', () => {
  const file = 'tracelens_h100_bert_small.trace.json.gz';
  let payload: TimelinePayload;
  let originNs: bigint;
  beforeAll(async () => {
    const profile = await importTrace(path.join(TRACES, file));
    originNs = profile.originNs;
    payload = encodeTimeline(profile, analyze(profile));
  });

  /** The file's own `[memory]` events, read with JSON.parse. */
  function rawMemory(deviceType: number) {
    return rawTraceEvents<{ name: string; ts: number; args: Record<string, number> }>(file).filter(
      (e) => e.name === '[memory]' && e.args['Device Type'] === deviceType,
    );
  }

  it('has one row per device, allocated and reserved, CUDA 0 beside its streams', () => {
    const names = payload.header.counters.map((c) => c.name);
    expect(names).toEqual(['Memory · CPU', 'Memory · CUDA 0']);
    const cuda = payload.header.counters[1];
    expect(cuda.unit).toBe('bytes');
    expect(cuda.series.map((s) => s.name)).toEqual(['allocated', 'reserved']);
    // Kineto's pid of device 0 is 0, the process of its streams.
    expect(cuda.pid).toBe('0');
    const deviceTracks = payload.header.tracks.filter((t) => t.kind === 'device');
    expect(deviceTracks.some((t) => t.pid === cuda.pid)).toBe(true);
  });

  it('peaks where the file says: the largest "Total Allocated" and "Total Reserved", at its first time', () => {
    const events = rawMemory(1);
    const cuda = payload.header.counters.find((c) => c.name === 'Memory · CUDA 0')!;
    const [allocated, reserved] = cuda.series;
    const maxAllocated = Math.max(...events.map((e) => e.args['Total Allocated']));
    const maxReserved = Math.max(...events.map((e) => e.args['Total Reserved']));
    expect(allocated.max).toBe(maxAllocated);
    expect(reserved.max).toBe(maxReserved);
    expect(allocated.min).toBe(Math.min(...events.map((e) => e.args['Total Allocated'])));
    expect(allocated.points).toBe(events.length);
    expect(allocated.to - allocated.from).toBe(events.length);
    const firstPeak = Math.min(
      ...events.filter((e) => e.args['Total Allocated'] === maxAllocated).map((e) => e.ts),
    );
    // Since 2024 Kineto writes ts relative to baseTimeNanoseconds (this trace does).
    const base = BigInt(rawDocument(file).baseTimeNanoseconds ?? 0);
    expect(Math.abs(allocated.peakNs - (firstPeak * 1000 + Number(base - originNs)))).toBeLessThan(1_000);
    // It rises and falls: between the first and the last sample it goes both up and down.
    const values = Array.from(payload.columns.counterValue.subarray(allocated.from, allocated.to));
    expect(values.some((v, k) => k > 0 && v > values[k - 1])).toBe(true);
    expect(values.some((v, k) => k > 0 && v < values[k - 1])).toBe(true);
  });

  it('answers the value held at any time in the webview, and says it in MB', () => {
    const model = new TimelineModel(unpackTimeline(packTimeline(payload)));
    const cuda = model.counters.find((c) => c.name === 'Memory · CUDA 0')!;
    const [allocated] = model.seriesOf(cuda);
    const peak = cuda.series[0];
    expect(valueAt(allocated, peak.peakNs)?.value).toBe(peak.max);
    expect(valueAt(allocated, peak.peakNs - 1)?.value).toBeLessThan(peak.max);
    expect(valueAt(allocated, payload.columns.counterTs[peak.from] - 1)).toBeUndefined();
    const text = describeCounterAt(cuda, model.seriesOf(cuda), peak.peakNs, model.header.startNs);
    expect(text).toMatch(
      new RegExp(`^allocated ${(peak.max / 2 ** 20).toFixed(1)} MB · reserved \\d+\\.\\d MB at `),
    );
  });

  it('lays the memory row out after the device streams and before the CPU threads of its process', () => {
    const model = new TimelineModel(payload);
    const layout = new TrackLayout(model);
    layout.build();
    const process = layout.rows.find((r) => r.kind === 'counter' && r.label === 'Memory · CUDA 0')!.process;
    const kinds = layout.rows
      .filter((r) => r.process === process && r.kind !== 'process')
      .map((r) =>
        r.kind === 'counter' ? 'counter' : model.header.tracks.find((t) => t.id === r.trackId)!.kind,
      );
    expect(kinds.indexOf('counter')).toBeGreaterThan(kinds.lastIndexOf('device'));
    expect(kinds.lastIndexOf('counter')).toBeLessThan(
      kinds.indexOf('cpu') < 0 ? Infinity : kinds.indexOf('cpu'),
    );
    // The CPU's memory is in the host process, before its threads.
    const cpu = layout.rows.find((r) => r.kind === 'counter' && r.label === 'Memory · CPU')!;
    const host = layout.rows.filter((r) => r.process === cpu.process && r.kind !== 'process');
    expect(host[0]).toBe(cpu);
  });
});

describe('counter columns in the payload', () => {
  it('survive packTimeline / unpackTimeline', () => {
    const profile = importTraceBytes('counters.json', enc(counterTrace(COUNTERS)));
    const payload = encodeTimeline(profile, analyze(profile));
    const back = unpackTimeline(packTimeline(payload));
    expect(back.header.counters).toEqual(payload.header.counters);
    expect(Array.from(back.columns.counterTs)).toEqual(Array.from(payload.columns.counterTs));
    expect(Array.from(back.columns.counterValue)).toEqual(Array.from(payload.columns.counterValue));
    expect(back.columns.counterTs.length).toBeGreaterThan(0);
  });

  /** A long series: a slow sine with noise, one spike and one dip, n points. */
  function longSeries(n: number) {
    const ts = new Float64Array(n);
    const value = new Float64Array(n);
    let seed = 12345;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let k = 0; k < n; k++) {
      ts[k] = k * 1000 + Math.floor(random() * 500);
      value[k] = 1e9 + 1e8 * Math.sin(k / 5000) + random() * 1e6;
    }
    value[Math.floor(n * 0.37)] = 5e9;
    value[Math.floor(n * 0.81)] = -7;
    return { ts, value };
  }

  it('downsamples a series past the limit, keeping its peak, its dip, its last value and only real points', () => {
    const { ts, value } = longSeries(400_000);
    const out = downsampleSeries(ts, value);
    expect(out.ts.length).toBeLessThanOrEqual(MAX_COUNTER_POINTS);
    expect(out.ts.length).toBeLessThanOrEqual(3 * COUNTER_BUCKETS);
    expect(out.ts.length).toBeGreaterThan(COUNTER_BUCKETS);
    expect(Math.max(...out.value)).toBe(5e9);
    expect(Math.min(...out.value)).toBe(-7);
    expect(out.ts[out.ts.length - 1]).toBe(ts[ts.length - 1]);
    expect(out.value[out.value.length - 1]).toBe(value[value.length - 1]);
    const index = new Map(Array.from(ts, (t, k) => [t, k]));
    let unordered = 0;
    let invented = 0;
    for (let k = 0; k < out.ts.length; k++) {
      if (k > 0 && out.ts[k] <= out.ts[k - 1]) unordered++;
      const at = index.get(out.ts[k]);
      if (at === undefined || value[at] !== out.value[k]) invented++;
    }
    expect({ unordered, invented }).toEqual({ unordered: 0, invented: 0 });
  });

  it('leaves a series at the limit whole', () => {
    const { ts, value } = longSeries(MAX_COUNTER_POINTS);
    const out = downsampleSeries(ts, value);
    expect(out.ts).toBe(ts);
    expect(out.value).toBe(value);
  });

  it('says in the payload how many points a downsampled series had, and keeps its peak', () => {
    const n = 150_000;
    const counters = Array.from({ length: n }, (_, k) => ({
      ph: 'C',
      name: 'bytes in flight',
      pid: 10,
      ts: 1_000 + k * 0.01,
      args: { bytes: k === 90_000 ? 1e12 : k % 1000 },
    }));
    const profile = importTraceBytes('many.json', enc(counterTrace(counters)));
    const payload = encodeTimeline(profile, analyze(profile));
    const [series] = payload.header.counters[0].series;
    expect(series.points).toBe(n);
    expect(series.to - series.from).toBeLessThanOrEqual(MAX_COUNTER_POINTS);
    expect(series.max).toBe(1e12);
    const values = payload.columns.counterValue.subarray(series.from, series.to);
    expect(Math.max(...values)).toBe(1e12);
    // The webview's coarser levels keep it too, and the row and its hover say it is downsampled.
    const model = new TimelineModel(payload);
    const [lod] = model.seriesOf(model.counters[0]);
    expect(counterDetail(model.counters[0])).toBe('peak 1,000,000,000,000 · downsampled');
    expect(describeCounterAt(model.counters[0], [lod], series.peakNs, model.header.startNs)).toContain(
      `(downsampled: ${(series.to - series.from).toLocaleString('en-US')} of 150,000 points,`,
    );
    for (const pixels of [100, 1000, 10_000]) {
      const level = lod.levelFor(series.to - series.from, pixels);
      expect(level.length).toBeLessThanOrEqual(Math.max(4 * pixels, 2));
      expect(Math.max(...level.max)).toBe(1e12);
      expect(Math.min(...level.min)).toBe(0);
    }
  });
});

describe('CUDA graph launches (test/fixtures/graphs)', () => {
  const file = path.join(ROOT, 'test/fixtures/graphs/cuda_graph_replay.trace.json');
  let model: TimelineModel;
  let byName: (name: string) => number[];
  beforeAll(async () => {
    const profile = await importTrace(file);
    model = new TimelineModel(encodeTimeline(profile, analyze(profile)));
    byName = (name) =>
      Array.from({ length: model.sliceCount }, (_, i) => i).filter((i) => model.nameOf(i) === name);
  });

  it('is a modern Kineto trace: graph ids on the kernels one cudaGraphLaunch replayed', () => {
    const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { traceEvents: { args?: object }[] };
    const graphKernels = doc.traceEvents.filter((e) => e.args && 'graph id' in e.args);
    // Four replayed by one launch, one whose launch fell outside the window.
    expect(graphKernels).toHaveLength(5);
  });

  it('groups the replayed kernels under their launch, and no other kernel', () => {
    const [launch] = byName('cudaGraphLaunch');
    const kernels = model.launchedFrom(launch);
    expect(kernels.map((k) => model.nameOf(k))).toEqual([
      'sm90_xmma_gemm_f16f16',
      'vectorized_elementwise_kernel<gelu>',
      'sm90_xmma_gemm_f16f16',
      'reduce_kernel<512, 1>',
    ]);
    expect(model.graphLaunchOf(launch)).toBe(launch);
    for (const k of kernels) {
      expect(model.columns.kind[k]).toBe(SliceKind.Kernel);
      expect(model.graphLaunchOf(k, model.argsOf(k))).toBe(launch);
    }
    const [warmup] = byName('sm90_xmma_gemm_warmup');
    expect(model.graphLaunchOf(warmup, model.argsOf(warmup))).toBe(-1);
    expect(model.graphLaunchOf(byName('cudaLaunchKernel')[0])).toBe(-1);
    const [orphan] = byName('triton_poi_fused_add_0');
    expect(model.columns.runtimeOf[orphan]).toBe(-1);
    expect(model.graphLaunchOf(orphan, model.argsOf(orphan))).toBe(-1);
  });
});

describe('the memory track of a 2021 trace (Bytes only, no totals)', () => {
  const file = 'kineto_tbplugin_2021_v100_resnet50_w0.pt.trace.json.gz';

  it("is the running sum of each device's [memory] events' Bytes, labelled so", async () => {
    const profile = await importTrace(path.join(TRACES, file));
    const payload = encodeTimeline(profile, analyze(profile));
    expect(payload.header.counters.map((c) => c.name)).toEqual(['Memory · CPU', 'Memory · CUDA 0']);
    const all = rawTraceEvents<{ name: string; ts: number; args: Record<string, number> }>(file);
    for (const [deviceType, row] of [0, 1].map((t) => [t, payload.header.counters[t]] as const)) {
      const events = all
        .filter((e) => e.name === '[memory]' && e.args['Device Type'] === deviceType)
        .sort((a, b) => a.ts - b.ts);
      expect(row.series.map((s) => s.name)).toEqual(['allocated since the trace began']);
      let held = 0;
      let peak = -Infinity;
      for (const e of events) {
        held += e.args.Bytes;
        peak = Math.max(peak, held);
      }
      const [series] = row.series;
      expect(series.points).toBe(events.length);
      expect(series.max).toBe(peak);
      expect(payload.columns.counterValue[series.to - 1]).toBe(held);
    }
  });
});
