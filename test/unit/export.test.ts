/**
 * flagprof export on real traces: a profile written as a Kineto trace and read back by the importer keeps every
 * slice (per category, in place and in time), every device event's op, every flow and every call site; the file
 * is the Kineto shape other viewers read; a failed export leaves nothing behind.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import type { Analysis } from '../../extension/analysis/types';
import { exportProfile, microseconds } from '../../extension/capture/export';
import { UserError } from '../../extension/import/errors';
import { importTrace, importTraceBytes } from '../../extension/import/kineto';
import { isDeviceKind, type Profile } from '../../extension/model/profile';
import { ROOT, tracePath } from '../helpers/traces';

const CUDA = 'tracelens_h100_bert_small.trace.json.gz';
const ROCM = 'hta_mi250_rocm6.2_minitoy.trace.json.gz';
const ASCEND = 'ascend_npu_trace_view.json';
/** 2021: string stream tids with integer flow tids, and the trace's own Call stack args (exact lines). */
const TBPLUGIN_2021 = 'kineto_tbplugin_2021_v100_resnet50_w0.pt.trace.json.gz';

const work = mkdtempSync(path.join(os.tmpdir(), 'flagprof-export-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface RoundTrip {
  original: Profile;
  reimported: Profile;
  before: Analysis;
  after: Analysis;
  file: string;
  written: Awaited<ReturnType<typeof exportProfile>>;
}

async function roundTrip(
  name: string,
  out = `${name.replace(/\.json(\.gz)?$/, '')}.json.gz`,
): Promise<RoundTrip> {
  const original = await importTrace(path.join(ROOT, tracePath(name)));
  const file = path.join(work, out);
  const written = await exportProfile(original, file);
  const reimported = await importTrace(file);
  return { original, reimported, before: analyze(original), after: analyze(reimported), file, written };
}

/** Slices per (category, kind): the kind is what the importer made of the category (or of the process). */
function slicesPerCategory(profile: Profile): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < profile.slices.length; i++) {
    const key = `${profile.categoryOf(i)} / ${profile.slices.kind[i]}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

function flowCounts(analysis: Analysis) {
  const { paired, startOnly, finishOnly, byCategory } = analysis.flows;
  return { paired, startOnly, finishOnly, byCategory };
}

/** The exported file as JSON (it is small enough here), whatever its compression. */
function readExported(file: string): { traceEvents: Record<string, unknown>[] } & Record<string, unknown> {
  const bytes = readFileSync(file);
  const text = (bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes).toString('utf8');
  return JSON.parse(text) as { traceEvents: Record<string, unknown>[] } & Record<string, unknown>;
}

describe('export round trip on real traces', () => {
  for (const name of [CUDA, ROCM, ASCEND, TBPLUGIN_2021]) {
    it(`${name}: the same slices per category, device-event links and flows`, async () => {
      const { original, reimported, before, after, written } = await roundTrip(name);
      expect(reimported.slices.length).toBe(original.slices.length);
      expect(slicesPerCategory(reimported)).toEqual(slicesPerCategory(original));
      expect(after.deviceEvents).toEqual(before.deviceEvents);
      expect(after.deviceEvents.linkedToOp).toBeGreaterThan(0);
      expect(after.externalIdTrusted).toBe(before.externalIdTrusted);
      expect(flowCounts(after)).toEqual(flowCounts(before));
      expect(written.flowPairs).toBe(before.flows.paired);
      expect(written.slices).toBe(original.slices.length);
      let deviceEvents = 0;
      for (let i = 0; i < original.slices.length; i++) {
        // Written in slice order: slice i is slice i again, linked to the same op.
        expect(reimported.nameOf(i)).toBe(original.nameOf(i));
        expect(after.opOf[i], `${original.nameOf(i)} (${i})`).toBe(before.opOf[i]);
        if (isDeviceKind(original.slices.kind[i])) deviceEvents++;
      }
      expect(written.deviceEvents).toBe(deviceEvents);
    });
  }

  it('keeps every slice at the same absolute time and duration, on a track of the same names', async () => {
    const { original, reimported } = await roundTrip(CUDA, 'times.json');
    const shift = Number(original.originNs - reimported.originNs);
    for (let i = 0; i < original.slices.length; i++) {
      expect(reimported.slices.start[i] - shift).toBeCloseTo(original.slices.start[i], 3);
      expect(reimported.slices.dur[i]).toBeCloseTo(original.slices.dur[i], 3);
      const a = original.tracks[original.slices.track[i]];
      const b = reimported.tracks[reimported.slices.track[i]];
      expect([b.processName, b.name, b.kind]).toEqual([a.processName, a.name, a.kind]);
    }
  });

  it('keeps every event’s args', async () => {
    for (const name of [CUDA, ASCEND]) {
      const { original, reimported } = await roundTrip(name, `args-${name}.json`);
      for (let i = 0; i < original.slices.length; i++)
        expect(reimported.argsOf(i)).toEqual(original.argsOf(i));
    }
  });

  it('keeps the call sites of a trace’s own Call stack', async () => {
    const { original, reimported } = await roundTrip(TBPLUGIN_2021, 'sites.json.gz');
    expect(original.sites?.size).toBeGreaterThan(0);
    expect(reimported.sites).toEqual(original.sites);
  });
});

describe('the file written', () => {
  it('is Kineto’s shape: device events on pid = device, tid = stream; ac2g flows; M events; rank for HTA', async () => {
    const { file, written, before } = await roundTrip(CUDA, 'shape.json');
    const trace = readExported(file);
    expect(trace.traceEvents.length).toBe(written.events);
    expect(trace.distributedInfo).toEqual({ rank: 0 });
    expect(trace.deviceProperties).toEqual(before.profile.metadata.deviceProperties);
    const kernels = trace.traceEvents.filter((e) => e.cat === 'kernel');
    expect(kernels.length).toBeGreaterThan(0);
    for (const kernel of kernels) {
      const args = kernel.args as Record<string, unknown>;
      expect([kernel.ph, kernel.pid, kernel.tid]).toEqual(['X', args.device, args.stream]);
      expect(typeof args.correlation).toBe('number');
    }
    const flows = trace.traceEvents.filter((e) => e.cat === 'ac2g');
    expect(flows.filter((e) => e.ph === 's').length).toBeGreaterThan(0);
    for (const half of flows.filter((e) => e.ph === 'f')) expect(half.bp).toBe('e');
    const named = trace.traceEvents.filter((e) => e.ph === 'M' && e.name === 'thread_name');
    expect(named.some((e) => (e.args as { name: string }).name.startsWith('stream '))).toBe(true);
  });

  it('writes ts in µs from baseTimeNanoseconds on a whole second, as exact doubles', async () => {
    const { file, original } = await roundTrip(ROCM, 'base.json');
    const text = readFileSync(file, 'utf8');
    const base = BigInt(/"baseTimeNanoseconds": (\d+)/.exec(text)![1]);
    expect(base % 1_000_000_000n).toBe(0n);
    const trace = readExported(file);
    const times = trace.traceEvents.filter((e) => typeof e.ts === 'number').map((e) => e.ts as number);
    const firstUs = Math.min(...times);
    expect(firstUs).toBeLessThan(1e6); // within the second after the base
    // The earliest slice starts at the profile's origin: base + its ts, to the nanosecond.
    expect(base + BigInt(Math.round(firstUs * 1000))).toBe(original.originNs);
  });

  it('is gzipped when the name ends in .gz, plain JSON otherwise', async () => {
    const gz = await roundTrip(ROCM, 'rocm.json.gz');
    const plain = await roundTrip(ROCM, 'rocm.json');
    expect([...readFileSync(gz.file).subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    expect(readFileSync(plain.file, 'utf8').startsWith('{')).toBe(true);
    expect(gunzipSync(readFileSync(gz.file)).equals(readFileSync(plain.file))).toBe(true);
  });

  it('writes args with bare non-JSON values (seed 000 §3.4) as valid JSON, the values as strings', async () => {
    const text =
      '{"traceEvents":[{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":10,"dur":5,' +
      '"args":{"memory kind": N/A, "correlation": 3, "bandwidth": 8e-05}}]}';
    const profile = importTraceBytes('bare.json', new TextEncoder().encode(text));
    const file = path.join(work, 'bare.json');
    await exportProfile(profile, file);
    const kernel = readExported(file).traceEvents.find((e) => e.name === 'gemm');
    expect(kernel?.args).toEqual({ 'memory kind': 'N/A', correlation: 3, bandwidth: 8e-5 });
    expect((await importTrace(file)).argsOf(0)).toEqual(profile.argsOf(0));
  });

  it('writes µs as Kineto does, without float noise', () => {
    expect(microseconds(964507875)).toBe('964507.875');
    expect(microseconds(311.00000000000006)).toBe('0.311');
    expect(microseconds(20000)).toBe('20');
    expect(microseconds(1999.9999999)).toBe('2');
    expect(microseconds(123456.5)).toBe('123.4565');
    expect(microseconds(0)).toBe('0');
  });
});

describe('bad targets and failed exports', () => {
  it('refuses a folder that does not exist, in one line naming the file, and leaves nothing', async () => {
    const profile = await importTrace(path.join(ROOT, tracePath(ROCM)));
    const target = path.join(work, 'missing', 'out.json');
    const error = await exportProfile(profile, target).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toBe(`${target}: cannot write the trace (ENOENT)`);
    expect(readdirSync(work).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });

  it('refuses a name that is not a trace’s, and a folder', async () => {
    const profile = await importTrace(path.join(ROOT, tracePath(ROCM)));
    await expect(exportProfile(profile, path.join(work, 'out.txt'))).rejects.toThrow(
      /out\.txt: expected a name ending in \.json or \.json\.gz$/,
    );
    const named = path.join(work, 'a-folder.json'); // a folder whose name looks like a trace's
    mkdirSync(named);
    await expect(exportProfile(profile, named)).rejects.toThrow(/is a folder, not a file to write$/);
  });

  it('leaves the previous file whole and no partial file when writing fails midway', async () => {
    const profile = await importTrace(path.join(ROOT, tracePath(CUDA)));
    const folder = mkdtempSync(path.join(work, 'fail-'));
    const target = path.join(folder, 'trace.json.gz');
    writeFileSync(target, 'previous export');
    // The args arena fails once events are being written (as a read of the profile could).
    let calls = 0;
    const raw = profile.args.raw.bind(profile.args);
    profile.args.raw = () => {
      if (++calls > 100) throw new Error('args arena gone');
      return raw();
    };
    await expect(exportProfile(profile, target)).rejects.toThrow('args arena gone');
    expect(calls).toBeGreaterThan(100);
    expect(readFileSync(target, 'utf8')).toBe('previous export');
    expect(readdirSync(folder)).toEqual(['trace.json.gz']);
  });
});
