import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { buildSummary } from '../../extension/analysis/summary';
import { LinkProvenance } from '../../extension/analysis/types';
import { importTrace, importTraceBytes } from '../../extension/import/kineto';
import { ROOT, tracePath } from '../helpers/traces';

type Event = Record<string, unknown>;

function profileOf(events: Event[]) {
  return importTraceBytes('hand.json', new TextEncoder().encode(JSON.stringify({ traceEvents: events })));
}

const op = (name: string, ts: number, dur: number, ext: number, tid = 1): Event => ({
  ph: 'X',
  cat: 'cpu_op',
  name,
  pid: 1,
  tid,
  ts,
  dur,
  args: { 'External id': ext },
});
const launch = (ts: number, corr: number, ext?: number, tid = 1): Event => ({
  ph: 'X',
  cat: 'cuda_runtime',
  name: 'cudaLaunchKernel',
  pid: 1,
  tid,
  ts,
  dur: 2,
  args: ext === undefined ? { correlation: corr } : { correlation: corr, 'External id': ext },
});
const kernel = (name: string, ts: number, dur: number, corr: number, ext?: number): Event => ({
  ph: 'X',
  cat: 'kernel',
  name,
  pid: 0,
  tid: 7,
  ts,
  dur,
  args: ext === undefined ? { correlation: corr } : { correlation: corr, 'External id': ext },
});
const flow = (ph: 's' | 'f', id: number, ts: number, pid: number, tid: number, cat = 'ac2g'): Event => ({
  ph,
  id,
  ts,
  pid,
  tid,
  cat,
  name: cat,
  ...(ph === 'f' ? { bp: 'e' } : {}),
});

function indexOf(profile: ReturnType<typeof profileOf>, name: string, nth = 0): number {
  let seen = 0;
  for (let i = 0; i < profile.slices.length; i++) if (profile.nameOf(i) === name && seen++ === nth) return i;
  throw new Error(`no slice ${name}`);
}

describe('device event -> runtime call -> op', () => {
  it('trusts External ids when they agree with enclosure, and records the provenance', () => {
    const p = profileOf([
      op('aten::linear', 100, 50, 10),
      op('aten::addmm', 105, 30, 11),
      launch(110, 500, 11),
      kernel('gemm', 140, 20, 500, 11),
      op('aten::relu', 200, 10, 12),
      launch(202, 501, 12),
      kernel('relu_kernel', 220, 5, 501, 12),
    ]);
    const a = analyze(p);
    expect(a.externalIdTrusted).toBe(true);
    const gemm = indexOf(p, 'gemm');
    expect(a.runtimeOf[gemm]).toBe(indexOf(p, 'cudaLaunchKernel'));
    expect(p.nameOf(a.opOf[gemm])).toBe('aten::addmm');
    expect(a.provenance[gemm]).toBe(LinkProvenance.ExternalId);
    // Device self time stays on the op that launched; total includes child ops.
    const addmm = buildSummary(a).ops.find((o) => o.name === 'aten::addmm')!;
    const linear = buildSummary(a).ops.find((o) => o.name === 'aten::linear')!;
    expect(addmm.device_self_us).toBe(20);
    expect(linear.device_self_us).toBe(0);
    expect(linear.device_total_us).toBe(20);
    expect(linear.cpu_self_us).toBe(20);
    expect(linear.cpu_total_us).toBe(50);
  });

  it('falls back to enclosure when External ids equal the correlation id and point at unrelated ops (2022-23 traces)', () => {
    const p = profileOf([
      op('aten::mm', 100, 50, 500), // unrelated op whose External id collides with a correlation id
      op('aten::add', 200, 50, 7),
      launch(210, 600, 600),
      kernel('add_kernel', 260, 10, 600, 600),
      op('aten::mul', 300, 50, 600), // the External id 600 resolves here: wrong
      op('aten::sub', 400, 50, 8),
      launch(410, 601, 601),
      kernel('sub_kernel', 460, 10, 601, 601),
      op('aten::div', 500, 50, 601),
    ]);
    const a = analyze(p);
    expect(a.externalIdTrusted).toBe(false);
    expect(a.trustReason).toMatch(/equal to their correlation id/);
    const add = indexOf(p, 'add_kernel');
    expect(p.nameOf(a.opOf[add])).toBe('aten::add');
    expect(a.provenance[add]).toBe(LinkProvenance.Enclosure);
    expect(p.nameOf(a.opOf[indexOf(p, 'sub_kernel')])).toBe('aten::sub');
  });

  it('leaves a device event with no runtime call and no usable External id unlinked, and counts it', () => {
    const p = profileOf([
      op('aten::add', 100, 50, 1),
      launch(110, 10),
      kernel('k', 200, 5, 10),
      kernel('orphan', 300, 5, 99),
    ]);
    const a = analyze(p);
    expect(a.deviceEvents).toEqual({
      total: 2,
      linkedToRuntime: 1,
      linkedToOp: 1,
      byProvenance: { external_id: 0, enclosure: 1, none: 1 },
    });
    expect(a.opOf[indexOf(p, 'orphan')]).toBe(-1);
  });

  it('links through launch flows when the trace has no correlation args (Ascend)', () => {
    const p = profileOf([
      { ph: 'X', cat: 'cpu_op', name: 'aten::add', pid: 1, tid: 1, ts: 100, dur: 50 },
      { ph: 'X', name: 'AddKernel', pid: 800, tid: 3, ts: 200, dur: 10 },
      { ph: 'M', name: 'process_name', pid: 800, tid: 0, args: { name: 'Ascend Hardware' } },
      flow('s', 77, 110, 1, 1, 'async_npu'),
      flow('f', 77, 200, 800, 3, 'async_npu'),
    ]);
    const a = analyze(p);
    expect(p.nameOf(a.opOf[indexOf(p, 'AddKernel')])).toBe('aten::add');
  });
});

describe('flows pair by (category, id)', () => {
  it('counts paired, start-only and finish-only ids, per category', () => {
    const p = profileOf([
      op('aten::add', 100, 50, 1),
      launch(110, 10),
      kernel('k', 200, 5, 10),
      flow('s', 10, 110, 1, 1),
      flow('f', 10, 200, 0, 7),
      flow('s', 11, 111, 1, 1),
      flow('f', 12, 201, 0, 7),
      flow('f', 10, 200, 0, 7, 'fwdbwd'), // same id, other category: not a pair
    ]);
    const a = analyze(p);
    expect([a.flows.paired, a.flows.startOnly, a.flows.finishOnly]).toEqual([1, 1, 2]);
    expect(a.flows.byCategory.ac2g).toEqual({ paired: 1, startOnly: 1, finishOnly: 1 });
    expect(a.flows.pairs[0]).toMatchObject({ from: indexOf(p, 'cudaLaunchKernel'), to: indexOf(p, 'k') });
  });
});

describe('kernels and lines', () => {
  it('names the op that launched most of a kernel’s time', () => {
    const p = profileOf([
      op('aten::mm', 100, 50, 1),
      launch(110, 10, 1),
      kernel('gemm', 200, 50, 10, 1),
      op('aten::addmm', 300, 50, 2),
      launch(310, 11, 2),
      kernel('gemm', 400, 5, 11, 2),
    ]);
    expect(analyze(p).kernels).toEqual([
      { name: 'gemm', kind: 'kernel', count: 2, totalNs: 55000, topOp: 'aten::mm' },
    ]);
  });

  it('function level: the innermost user python_function owns the op, library frames do not', () => {
    const py = (name: string, ts: number, dur: number): Event => ({
      ph: 'X',
      cat: 'python_function',
      name,
      pid: 1,
      tid: 1,
      ts,
      dur,
    });
    const p = profileOf([
      py('train.py(10): step', 0, 1000),
      py('model.py(40): forward', 10, 500),
      py('.venv/lib/python3.11/site-packages/torch/nn/modules/module.py(1501): _call_impl', 20, 400),
      op('aten::linear', 30, 100, 1),
      op('aten::addmm', 35, 90, 2),
      launch(40, 10, 2),
      kernel('gemm', 200, 40, 10, 2),
      op('aten::relu', 600, 50, 3),
    ]);
    const a = analyze(p);
    const lines = buildSummary(a).lines;
    const fields = { kind: 'function', exact: false };
    expect(lines).toEqual([
      {
        file: 'model.py',
        line: 40,
        function: 'forward',
        ...fields,
        cpu_us: 100,
        device_us: 40,
        cpu_self_us: 100,
        cpu_total_us: 100,
        device_self_us: 40,
        device_total_us: 40,
        ops: 1,
        top_ops: [{ name: 'aten::linear', calls: 1, cpu_us: 100, device_us: 40 }],
      },
      // step() runs forward(): its total includes forward's ops, its self only its own aten::relu.
      {
        file: 'train.py',
        line: 10,
        function: 'step',
        ...fields,
        cpu_us: 50,
        device_us: 0,
        cpu_self_us: 50,
        cpu_total_us: 150,
        device_self_us: 0,
        device_total_us: 40,
        ops: 1,
        top_ops: [{ name: 'aten::relu', calls: 1, cpu_us: 50, device_us: 0 }],
      },
    ]);
    expect(a.lines[0].topKernels).toEqual([{ name: 'gemm', count: 1, totalNs: 40000 }]);
  });

  it('exact call sites from the capture agent win over def lines', () => {
    const p = profileOf([
      { ph: 'X', cat: 'python_function', name: 'model.py(40): forward', pid: 1, tid: 1, ts: 0, dur: 1000 },
      op('aten::softmax', 30, 100, 5),
    ]);
    p.sites = new Map([[5, [{ file: '/home/u/model.py', line: 44, function: 'forward' }]]]);
    const lines = buildSummary(analyze(p)).lines;
    expect(lines).toEqual([
      {
        file: '/home/u/model.py',
        line: 44,
        function: 'forward',
        exact: true,
        cpu_us: 100,
        device_us: 0,
        cpu_self_us: 100,
        cpu_total_us: 100,
        device_self_us: 0,
        device_total_us: 0,
        ops: 1,
        top_ops: [{ name: 'aten::softmax', calls: 1, cpu_us: 100, device_us: 0 }],
      },
    ]);
  });

  it('gives every line of a call chain its total with callees, and the innermost line its self time', () => {
    const p = profileOf([
      op('aten::linear', 100, 50, 1),
      op('aten::addmm', 105, 40, 2),
      launch(110, 10, 2),
      kernel('gemm', 200, 30, 10, 2),
      op('aten::relu', 300, 20, 3),
      launch(305, 11, 3),
      kernel('relu_kernel', 400, 5, 11, 3),
    ]);
    const model = { file: '/u/model.py', line: 7, function: 'forward', column: 16 };
    const train = (column: number) => ({ file: '/u/train.py', line: 3, function: '<module>', column });
    // linear (and addmm, by its enclosing op) in model.py:7 called from train.py:3; relu on train.py:3 itself.
    p.sites = new Map([
      [1, [model, train(9)]],
      [3, [train(5)]],
    ]);
    const a = analyze(p);
    const row = (file: string) => a.lines.find((l) => l.file === file)!;
    expect(row('/u/model.py')).toMatchObject({
      cpuSelfNs: 50_000,
      cpuTotalNs: 50_000,
      deviceSelfNs: 30_000,
      deviceTotalNs: 30_000,
      ops: 1,
      column: 16,
    });
    expect(row('/u/model.py').kind).toBeUndefined();
    expect(row('/u/train.py')).toMatchObject({
      cpuSelfNs: 20_000,
      cpuTotalNs: 70_000,
      deviceSelfNs: 5_000,
      deviceTotalNs: 35_000,
      ops: 1,
      column: 5,
      topOps: [{ name: 'aten::relu', calls: 1, cpuNs: 20_000, deviceNs: 5_000 }],
      topKernels: [{ name: 'relu_kernel', count: 1, totalNs: 5_000 }],
    });
    // Each op's own line, for the timeline's site column: addmm inherits linear's.
    expect(a.lines[a.lineOf[indexOf(p, 'aten::addmm')]].file).toBe('/u/model.py');
    expect(a.lines[a.lineOf[indexOf(p, 'aten::relu')]].file).toBe('/u/train.py');
  });
});

describe('real traces', () => {
  it('modern CUDA: every device event reaches its op through a trusted External id', async () => {
    const a = analyze(
      await importTrace(path.join(ROOT, tracePath('tracelens_h100_owlv2_large.trace.json.gz'))),
    );
    expect(a.externalIdTrusted).toBe(true);
    expect(a.deviceEvents.linkedToOp).toBe(a.deviceEvents.total);
    expect(a.deviceEvents.byProvenance.external_id).toBe(a.deviceEvents.total);
  });

  it('2023 A100 trace whose External ids equal correlation ids: linked by enclosure, all 98 device events', async () => {
    const a = analyze(await importTrace(path.join(ROOT, tracePath('hta_a100_simple_add.trace.json.gz'))));
    expect(a.externalIdTrusted).toBe(false);
    expect(a.deviceEvents).toEqual({
      total: 98,
      linkedToRuntime: 98,
      linkedToOp: 98,
      byProvenance: { external_id: 0, enclosure: 98, none: 0 },
    });
    expect(a.ops.find((o) => o.name === 'aten::addmm')?.deviceSelfNs).toBeGreaterThan(0);
  });

  it('op device self time reconciles with the summed durations of the device events it owns', async () => {
    const a = analyze(
      await importTrace(path.join(ROOT, tracePath('hta_v100_ns_resolution_rank0.pt.trace.json.gz'))),
    );
    const { slices } = a.profile;
    let linked = 0;
    for (let i = 0; i < slices.length; i++)
      if (a.opOf[i] >= 0 && (slices.kind[i] === 5 || slices.kind[i] === 6 || slices.kind[i] === 7))
        linked += slices.dur[i];
    const selfSum = a.ops.reduce((s, o) => s + o.deviceSelfNs, 0);
    expect(selfSum).toBeCloseTo(linked, 0);
  });
});
