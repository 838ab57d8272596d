/**
 * The ROCtracer (AMD ROCm, Hygon DCU) decode side through the addon, on captures written here record by record at
 * the offsets of the public ext/prof_protocol.h (not the tracer's mirror, so the two check each other): the HSA
 * clock mapped through calibration pairs, API names from a names frame, both correlation schemes, 64-bit ids,
 * copies and fills, launch dims the agent appended to dispatch records, damaged files.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { DecodedCapture } from '../../extension/import/addon';
import { importCapture } from '../../extension/import/capture';
import { SliceKind } from '../../extension/model/profile';
import {
  ROC_DOMAIN,
  ROC_KIND,
  ROC_OP,
  VENDOR,
  calibrationFrame,
  endFrame,
  ensureNativeBuilt,
  fpcHeader,
  namesFrame,
  recordsFrame,
  rocRecord,
  sessionFrame,
  type RawRecord,
} from '../helpers/native';
import { argsAt, buildCli, captureWriter, cliDecode, decodeWithArgs } from '../helpers/capture';

const T0 = 1_790_000_000_000_000_000n;
// The HSA system clock counts from boot: far from realtime, so an unmapped time would show.
const V0 = 5_000_000_000_000n;
const write = captureWriter('roctracer-decode');

const header = () => fpcHeader({ vendor: VENDOR.roctracer, apiVersion: 4, vendorNs: V0, realtimeNs: T0 });

const decode = decodeWithArgs;

const absolute = (c: DecodedCapture, t: number) => c.baseNs + BigInt(t);

const KERNEL = '_Z9addKernelPfS_';
const HIP_LAUNCH_KERNEL = 44;

/** One operator launch as ROCtracer delivers it (vendor clock): external id, the HIP call, then the kernel. */
function launch(correlation: bigint, externalId: bigint | null, t: bigint): RawRecord[] {
  const records: RawRecord[] = [];
  if (externalId !== null)
    records.push({
      bytes: rocRecord({ domain: ROC_DOMAIN.extApi, op: 1, start: 0n, end: 0n, correlation, externalId }),
    });
  records.push({
    bytes: rocRecord({
      domain: ROC_DOMAIN.hipApi,
      op: HIP_LAUNCH_KERNEL,
      start: t + 1000n,
      end: t + 5000n,
      correlation,
    }),
  });
  records.push({
    bytes: rocRecord({
      domain: ROC_DOMAIN.hipOps,
      op: ROC_OP.dispatch,
      kind: ROC_KIND.kernel,
      start: t + 6000n,
      end: t + 9000n,
      correlation,
      device: 1,
      queue: 7n,
    }),
    pointed: KERNEL,
  });
  return records;
}

/**
 * A dispatch record as the agent writes it once its HIP API callback saw the launch: the 64 ROCtracer bytes, then
 * magic "FDIM", dynamic shared memory, grid xyz (blocks), block xyz (threads), all u32.
 */
function withDims(
  record: Buffer,
  grid: number[],
  block: number[],
  shared: number,
  magic = 0x4d494446,
): Buffer {
  const tail = Buffer.alloc(32);
  tail.writeUInt32LE(magic, 0);
  tail.writeUInt32LE(shared, 4);
  [...grid, ...block].forEach((v, i) => tail.writeUInt32LE(v, 8 + 4 * i));
  return Buffer.concat([record, tail]);
}

beforeAll(() => {
  ensureNativeBuilt();
}, 300_000);

describe('decodeCapture of ROCtracer captures', () => {
  it('decodes a launch: HIP API name from the names frame, HSA clock mapped, ROCm metadata', () => {
    const c = decode(
      write([
        header(),
        sessionFrame(1, T0),
        recordsFrame(launch(80n, 3n, V0)),
        namesFrame(ROC_DOMAIN.hipApi, [[HIP_LAUNCH_KERNEL, 'hipLaunchKernel']]),
        endFrame(T0 + 1n),
      ]),
    );
    expect(c.vendor).toBe('roctracer');
    expect(c.apiVersion).toBe(4);
    expect(c.length).toBe(2);
    const runtime = [...c.kind].indexOf(3);
    const kernel = [...c.kind].indexOf(0);
    expect(c.names[c.name[runtime]]).toBe('hipLaunchKernel');
    expect(c.names[c.name[kernel]]).toBe('addKernel(float*, float*)');
    expect([c.correlation[runtime], c.correlation[kernel]]).toEqual([80, 80]);
    expect([c.externalId[runtime], c.externalId[kernel]]).toEqual([3, 3]);
    expect([c.process[runtime], c.thread[runtime]]).toEqual([4242, 4243]);
    expect([c.device[kernel], c.stream[kernel]]).toEqual([1, 7]);
    expect(c.cbid[runtime]).toBe(HIP_LAUNCH_KERNEL);
    // The header's pair maps the HSA clock onto realtime.
    expect(absolute(c, c.start[kernel])).toBe(T0 + 6000n);
    expect(absolute(c, c.end[runtime])).toBe(T0 + 5000n);
    expect(argsAt(c, kernel)).toEqual({
      device: 1,
      'External id': 3,
      stream: 7,
      correlation: 80,
      kind: 'Dispatch Kernel',
    });
    expect(argsAt(c, runtime)).toEqual({
      'External id': 3,
      cid: HIP_LAUNCH_KERNEL,
      cbid: HIP_LAUNCH_KERNEL,
      correlation: 80,
    });
    expect(c.counts).toMatchObject({ kernel: 1, runtime: 1, externalCorrelation: 1, badFrames: 0 });
  });

  it('gives a kernel the grid, block and shared memory of its launch, as CUPTI writes them; a kernel whose launch was not seen keeps none', () => {
    const [, seen] = launch(81n, null, V0);
    const [, unseen] = launch(82n, null, V0 + 20_000n);
    const [, odd] = launch(83n, null, V0 + 40_000n);
    const [, short] = launch(84n, null, V0 + 60_000n);
    const c = decode(
      write([
        header(),
        recordsFrame([
          { ...seen, bytes: withDims(seen.bytes, [120, 4, 2], [256, 2, 1], 16384) },
          unseen,
          // Not the agent's tail: another magic, or cut short. The dispatch itself still decodes.
          { ...odd, bytes: withDims(odd.bytes, [9, 9, 9], [9, 9, 9], 9, 0x12345678) },
          { ...short, bytes: withDims(short.bytes, [7, 7, 7], [7, 7, 7], 7).subarray(0, 80) },
        ]),
        endFrame(T0 + 1n),
      ]),
    );
    expect(c.length).toBe(4);
    expect([...c.kind]).toEqual([0, 0, 0, 0]);
    expect([...c.correlation]).toEqual([81, 82, 83, 84]);
    expect(argsAt(c, 0)).toEqual({
      device: 1,
      stream: 7,
      correlation: 81,
      kind: 'Dispatch Kernel',
      grid: [120, 4, 2],
      block: [256, 2, 1],
      'shared memory': 16384,
    });
    for (const i of [1, 2, 3]) {
      const args = argsAt(c, i);
      expect(Object.keys(args).sort()).toEqual(['correlation', 'device', 'kind', 'stream']);
    }
    expect(c.counts).toMatchObject({ kernel: 4, malformed: 0, implausible: 0 });
  });

  it('keeps the dims on the kernel slice of the imported profile', () => {
    const [api, kernel] = launch(90n, 5n, V0).slice(1);
    const profile = importCapture(
      write([
        header(),
        sessionFrame(1, T0),
        recordsFrame([api, { ...kernel, bytes: withDims(kernel.bytes, [64, 1, 1], [128, 1, 1], 0) }]),
        namesFrame(ROC_DOMAIN.hipApi, [[HIP_LAUNCH_KERNEL, 'hipLaunchKernel']]),
        sessionFrame(2, T0 + 100_000n),
      ]),
    );
    const kinds = [...profile.slices.kind.subarray(0, profile.slices.length)];
    expect(profile.argsOf(kinds.indexOf(SliceKind.Kernel))).toMatchObject({
      grid: [64, 1, 1],
      block: [128, 1, 1],
      'shared memory': 0,
    });
    expect(profile.argsOf(kinds.indexOf(SliceKind.Runtime))).not.toHaveProperty('grid');
  });

  it('maps through the start and stop calibration pairs, rate included', () => {
    const records: RawRecord[] = [
      {
        bytes: rocRecord({
          domain: ROC_DOMAIN.hipOps,
          op: ROC_OP.dispatch,
          start: V0 + 500_000_000n,
          end: V0 + 500_001_000n,
          correlation: 1n,
        }),
        pointed: 'k',
      },
    ];
    const c = decode(
      write([
        header(),
        calibrationFrame(1, V0, T0),
        recordsFrame(records),
        // The HSA clock ran 100 ppm slow against realtime over the second between start and stop.
        calibrationFrame(2, V0 + 1_000_000_000n, T0 + 1_000_100_000n),
      ]),
    );
    expect(c.calibration).toHaveLength(3);
    expect(Number(absolute(c, c.start[0]) - T0)).toBeCloseTo(500_050_000, -1);
  });

  it("takes a rate within the pairs' reading error (3 us over 0.2 s) for none: durations stay exact", () => {
    const kernel = (start: bigint): RawRecord => ({
      bytes: rocRecord({
        domain: ROC_DOMAIN.hipOps,
        op: ROC_OP.dispatch,
        start,
        end: start + 20_000n,
        correlation: 1n,
      }),
      pointed: 'k',
    });
    const c = decode(
      write([
        header(),
        calibrationFrame(1, V0, T0),
        recordsFrame([kernel(V0 + 100_000_000n)]),
        calibrationFrame(2, V0 + 200_000_000n, T0 + 200_003_000n),
      ]),
    );
    expect(c.end[0] - c.start[0]).toBe(20_000);
    expect(absolute(c, c.start[0]) - T0).toBe(100_000_000n);
  });

  it('resolves an API id no names frame named to the generic label, its id kept as cid', () => {
    const c = decode(
      write([
        header(),
        recordsFrame([
          {
            bytes: rocRecord({
              domain: ROC_DOMAIN.hipApi,
              op: 999,
              start: V0,
              end: V0 + 10n,
              correlation: 1n,
            }),
          },
        ]),
      ]),
    );
    expect(c.names[c.name[0]]).toBe('hipRuntime');
    expect(argsAt(c, 0).cid).toBe(999);
  });

  it('keeps External id 0: a valid torch id, not "absent"', () => {
    const c = decode(write([header(), recordsFrame(launch(5n, 0n, V0))]));
    expect([...c.externalId]).toEqual([0, 0]);
    expect(argsAt(c, 0)['External id']).toBe(0);
  });

  it('names copies by direction as Kineto does, a buffer fill as a memset, and leaves barriers out', () => {
    const copy = (kind: number, correlation: bigint, bytes: bigint) =>
      rocRecord({
        domain: ROC_DOMAIN.hipOps,
        op: ROC_OP.copy,
        kind,
        start: V0,
        end: V0 + 100n,
        correlation,
        bytes,
        queue: 2n,
      });
    const c = decode(
      write([
        header(),
        recordsFrame([
          { bytes: copy(ROC_KIND.htod, 1n, 4096n) },
          { bytes: copy(ROC_KIND.dtoh, 2n, 8n) },
          { bytes: copy(ROC_KIND.dtod, 3n, 8n) },
          { bytes: copy(ROC_KIND.fill, 4n, 100n) },
          { bytes: copy(0x1234, 5n, 1n) },
          {
            bytes: rocRecord({
              domain: ROC_DOMAIN.hipOps,
              op: ROC_OP.barrier,
              start: V0,
              end: V0 + 1n,
              correlation: 6n,
            }),
          },
        ]),
      ]),
    );
    expect([...c.name].map((n) => c.names[n])).toEqual([
      'Memcpy HtoD (Host -> Device)',
      'Memcpy DtoH (Device -> Host)',
      'Memcpy DtoD (Device -> Device)',
      'Memset (Device)',
      'Memcpy',
    ]);
    expect([...c.kind]).toEqual([1, 1, 1, 2, 1]);
    expect(c.counts).toMatchObject({ memcpy: 4, memset: 1, ignored: 1 });
    const memcpy = argsAt(c, 0);
    expect(memcpy).toMatchObject({ bytes: 4096, kind: 'HtoD', device: 0, stream: 2, correlation: 1 });
    expect(memcpy['memory bandwidth (GB/s)']).toBeCloseTo(40.96, 6);
    expect(argsAt(c, 3)).toMatchObject({ bytes: 100, kind: 'Fill Buffer' });
  });

  it('folds 64-bit correlation ids past 2^32 - 1 into 1 .. 2^32 - 1: every launch keeps its id and its pairing', () => {
    const last = 2n ** 32n - 1n;
    const file = write([
      header(),
      sessionFrame(1, T0),
      recordsFrame([
        ...launch(last, 9n, V0),
        ...launch(last + 1n, 10n, V0 + 10_000n),
        ...launch(last + 2n, 11n, V0 + 20_000n),
      ]),
      namesFrame(ROC_DOMAIN.hipApi, [[HIP_LAUNCH_KERNEL, 'hipLaunchKernel']]),
      sessionFrame(2, T0 + 100_000n),
    ]);
    const c = decode(file);
    expect(c.length).toBe(6);
    // 2^32 (0 modulo 2^32, the columns' "none") becomes 1, 2^32 + 1 becomes 2: never 0.
    expect([...c.correlation]).toEqual([4294967295, 4294967295, 1, 1, 2, 2]);
    expect([...c.externalId]).toEqual([9, 9, 10, 10, 11, 11]);
    expect(c.counts.correlationWrapped).toBe(6);
    expect(c.diagnostics.filter((d) => d.code === 'correlation-wrap')).toHaveLength(1);
    expect(c.diagnostics.filter((d) => d.severity === 'warning')).toEqual([]);
    const profile = importCapture(file);
    expect(profile.flows.length).toBe(6);
  });

  it('skips records without timing and rejects implausible or short ones with one diagnostic each', () => {
    const c = decode(
      write([
        header(),
        recordsFrame([
          {
            bytes: rocRecord({ domain: ROC_DOMAIN.hipOps, op: 0, start: 0n, end: 0n, correlation: 1n }),
            pointed: 'k',
          },
          {
            bytes: rocRecord({ domain: ROC_DOMAIN.hipOps, op: 0, start: V0 + 10n, end: V0, correlation: 2n }),
            pointed: 'k',
          },
          {
            bytes: rocRecord({
              domain: ROC_DOMAIN.hipOps,
              op: 0,
              start: V0,
              end: V0 + 1n,
              correlation: 3n,
              device: -1,
            }),
          },
          {
            bytes: rocRecord({
              domain: ROC_DOMAIN.hipApi,
              op: 1,
              start: V0,
              end: V0 + 10n,
              correlation: 4n,
            }).subarray(0, 56),
          },
          {
            bytes: rocRecord({ domain: ROC_DOMAIN.hipOps, op: 0, start: V0, end: V0 + 10n, correlation: 5n }),
            pointed: 'k',
          },
          { bytes: rocRecord({ domain: ROC_DOMAIN.extApi, op: 0, start: 0n, end: 0n, correlation: 0n }) },
          { bytes: rocRecord({ domain: 6, op: 0, start: V0, end: V0 + 1n, correlation: 0n }) },
        ]),
      ]),
    );
    expect(c.length).toBe(1);
    expect(c.correlation[0]).toBe(5);
    expect(c.counts).toMatchObject({ noTiming: 1, implausible: 2, malformed: 1, ignored: 2 });
    expect(c.diagnostics.filter((d) => d.code === 'layout')).toHaveLength(1);
    expect(c.diagnostics.filter((d) => d.code === 'record-size')).toHaveLength(1);
  });

  it('skips a damaged frame, naming its offset, and decodes the frames after it', () => {
    const good = recordsFrame(launch(1n, 1n, V0));
    const bad = Buffer.from(recordsFrame(launch(2n, 2n, V0 + 10_000n)));
    bad[40] ^= 0xff;
    const after = recordsFrame(launch(3n, 3n, V0 + 20_000n));
    const c = decode(write([header(), good, bad, after, endFrame(T0)]));
    expect([...c.correlation]).toEqual([1, 1, 3, 3]);
    expect(c.counts.badFrames).toBe(1);
    expect(c.diagnostics.find((d) => d.code === 'frame-crc')?.offset).toBe(64 + good.length);
    expect(argsAt(c, 3)).toMatchObject({ 'External id': 3, kind: 'Dispatch Kernel' });
  });
});

describe('importCapture of a ROCtracer capture', () => {
  it('names tracks as ROCm traces do: GPU N, stream N, cuda_runtime; one flow per correlation id', () => {
    const profile = importCapture(
      write([
        header(),
        sessionFrame(1, T0),
        recordsFrame(launch(80n, 3n, V0)),
        namesFrame(ROC_DOMAIN.hipApi, [[HIP_LAUNCH_KERNEL, 'hipLaunchKernel']]),
        sessionFrame(2, T0 + 100_000n),
      ]),
    );
    const kinds = [...profile.slices.kind.subarray(0, profile.slices.length)];
    const kernel = kinds.indexOf(SliceKind.Kernel);
    const runtime = kinds.indexOf(SliceKind.Runtime);
    expect(profile.tracks[profile.slices.track[kernel]]).toMatchObject({
      kind: 'device',
      processName: 'GPU 1',
      name: 'stream 7',
    });
    expect(profile.tracks[profile.slices.track[runtime]]).toMatchObject({
      kind: 'cpu',
      pid: '4242',
      tid: '4243',
    });
    expect(profile.categoryOf(runtime)).toBe('cuda_runtime');
    expect(profile.flows.length).toBe(2);
    expect(profile.slices.externalId[kernel]).toBe(3);
    expect(profile.metadata.capture).toMatchObject({ vendor: 'roctracer' });
  });
});

describe('flagprof decode of a ROCtracer capture', () => {
  beforeAll(buildCli, 120_000);

  it('says ROCtracer and prints the HIP API names', () => {
    const file = write([
      header(),
      recordsFrame(launch(80n, 0n, V0)),
      namesFrame(ROC_DOMAIN.hipApi, [[HIP_LAUNCH_KERNEL, 'hipLaunchKernel']]),
      endFrame(T0),
    ]);
    const { firstLine, events } = cliDecode(file);
    expect(firstLine).toContain(`${file}: ROCtracer API 4, format 1`);
    expect(events.find((e) => e.kind === 'runtime')?.name).toBe('hipLaunchKernel');
    expect(events.find((e) => e.kind === 'kernel')?.metadata.kind).toBe('Dispatch Kernel');
  });
});
