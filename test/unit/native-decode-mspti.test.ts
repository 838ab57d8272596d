/**
 * The MSPTI (Huawei Ascend) decode side through the addon, on captures written here record by record at the
 * offsets of the public mspti_activity.h (not the tracer's mirror, so the two check each other): names from the
 * strings the records pointed to, metadata, both correlation schemes, 64-bit ids, damaged files.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { importCapture } from '../../extension/import/capture';
import { SliceKind } from '../../extension/model/profile';
import {
  VENDOR,
  endFrame,
  ensureNativeBuilt,
  fpcHeader,
  msptiApiRecord,
  msptiExternalRecord,
  msptiKernelRecord,
  msptiKernelStrings,
  msptiMemoryRecord,
  recordsFrame,
  sessionFrame,
  type RawRecord,
} from '../helpers/native';
import { argsAt, buildCli, captureWriter, cliDecode, decodeWithArgs } from '../helpers/capture';

const T0 = 1_790_000_000_000_000_000n;
const write = captureWriter('mspti-decode');

const header = () => fpcHeader({ vendor: VENDOR.mspti, apiVersion: 260000, vendorNs: T0, realtimeNs: T0 });

const decode = decodeWithArgs;

const MATMUL = 'aclnnMatmul_MatMulCommon_MatMulV2';

/** One operator launch as MSPTI delivers it: external correlation, the API call, then the kernel. */
function launch(correlation: bigint, externalId: bigint | null, t: bigint): RawRecord[] {
  const records: RawRecord[] = [];
  if (externalId !== null) records.push({ bytes: msptiExternalRecord(correlation, externalId) });
  records.push({
    bytes: msptiApiRecord({ start: t + 1000n, end: t + 5000n, correlation }),
    pointed: 'aclnnMatmul',
  });
  records.push({
    bytes: msptiKernelRecord({ start: t + 6000n, end: t + 9000n, correlation }),
    pointed: msptiKernelStrings(MATMUL, 'KERNEL_AICORE'),
  });
  return records;
}

beforeAll(() => {
  ensureNativeBuilt();
}, 300_000);

describe('decodeCapture of MSPTI captures', () => {
  it('decodes a launch: names from the strings, both correlation schemes kept apart, Ascend metadata', () => {
    const c = decode(
      write([header(), sessionFrame(1, T0), recordsFrame(launch(80n, 3n, T0)), endFrame(T0 + 1n)]),
    );
    expect(c.vendor).toBe('mspti');
    expect(c.apiVersion).toBe(260000);
    expect(c.length).toBe(2);
    const runtime = [...c.kind].indexOf(3);
    const kernel = [...c.kind].indexOf(0);
    expect(c.names[c.name[runtime]]).toBe('aclnnMatmul');
    expect(c.names[c.name[kernel]]).toBe(MATMUL);
    expect([c.correlation[runtime], c.correlation[kernel]]).toEqual([80, 80]);
    expect([c.externalId[runtime], c.externalId[kernel]]).toEqual([3, 3]);
    expect(c.thread[runtime]).toBe(4243);
    expect(c.process[runtime]).toBe(4242);
    expect(c.stream[kernel]).toBe(3);
    expect(c.cbid[runtime]).toBe(0);
    // MSPTI's clock is realtime: nothing is shifted.
    expect(c.start[kernel]).toBe(6000);
    expect(c.end[kernel]).toBe(9000);
    expect(argsAt(c, kernel)).toEqual({
      device: 0,
      'External id': 3,
      stream: 3,
      'Task Type': 'KERNEL_AICORE',
      correlation: 80,
    });
    expect(argsAt(c, runtime)).toEqual({ 'External id': 3, 'Thread Id': 4243, correlation: 80 });
    expect(c.counts).toMatchObject({ kernel: 1, runtime: 1, externalCorrelation: 1, badFrames: 0 });
  });

  it('keeps External id 0: a valid torch id, not "absent"', () => {
    const c = decode(write([header(), recordsFrame(launch(5n, 0n, T0))]));
    expect([...c.externalId]).toEqual([0, 0]);
    expect(argsAt(c, 0)['External id']).toBe(0);
  });

  it('names copies by direction and carries bytes, bandwidth, value and whether the call was async', () => {
    const c = decode(
      write([
        header(),
        recordsFrame([
          {
            bytes: msptiMemoryRecord({
              kind: 'memcpy',
              start: T0,
              end: T0 + 100n,
              correlation: 1n,
              bytes: 4096n,
              copyKindOrValue: 3,
              isAsync: false,
            }),
          },
          {
            bytes: msptiMemoryRecord({
              kind: 'memset',
              start: T0,
              end: T0 + 200n,
              correlation: 2n,
              bytes: 100n,
              copyKindOrValue: 7,
            }),
          },
          {
            bytes: msptiMemoryRecord({
              kind: 'memcpy',
              start: T0,
              end: T0 + 1n,
              correlation: 3n,
              bytes: 1n,
              copyKindOrValue: 99,
            }),
          },
        ]),
      ]),
    );
    expect([...c.name].map((n) => c.names[n])).toEqual(['Memcpy DtoH', 'Memset', 'Memcpy Unknown']);
    expect([...c.kind]).toEqual([1, 2, 1]);
    const memcpy = argsAt(c, 0);
    expect(memcpy).toMatchObject({
      bytes: 4096,
      'Copy Kind': 'DtoH',
      Async: false,
      device: 0,
      stream: 3,
    });
    expect(memcpy['memory bandwidth (GB/s)']).toBeCloseTo(40.96, 6);
    expect(argsAt(c, 1)).toMatchObject({ bytes: 100, value: 7, Async: true });
    expect(argsAt(c, 1)).not.toHaveProperty('Copy Kind');
  });

  it('omits what the records left out instead of inventing it', () => {
    const c = decode(
      write([
        header(),
        recordsFrame([
          {
            bytes: msptiKernelRecord({ start: T0, end: T0 + 10n, correlation: 1n }),
            pointed: 'NameOnlyKernel',
          },
          { bytes: msptiKernelRecord({ start: T0, end: T0 + 10n, correlation: 2n }) },
          {
            bytes: msptiKernelRecord({ start: T0, end: T0 + 10n, correlation: 3n }),
            pointed: msptiKernelStrings('', 'KERNEL_AICPU'),
          },
          { bytes: msptiApiRecord({ start: T0, end: T0 + 10n, correlation: 4n }) },
          { bytes: msptiApiRecord({ start: T0, end: T0 + 10n, correlation: 5n }), pointed: '' },
        ]),
      ]),
    );
    expect([...c.name].map((n) => c.names[n])).toEqual([
      'NameOnlyKernel',
      'kernel',
      'kernel',
      'AscendRuntime',
      'AscendRuntime',
    ]);
    expect(argsAt(c, 0)).not.toHaveProperty('Task Type');
    expect(argsAt(c, 1)).not.toHaveProperty('Task Type');
    expect(argsAt(c, 2)['Task Type']).toBe('KERNEL_AICPU');
    for (const key of ['grid', 'block', 'registers per thread', 'est. achieved occupancy %', 'External id'])
      expect(argsAt(c, 0)).not.toHaveProperty(key);
  });

  it('folds 64-bit correlation ids past 2^32 - 1 into 1 .. 2^32 - 1: every launch keeps its id and its pairing', () => {
    const last = 2n ** 32n - 1n;
    const file = write([
      header(),
      sessionFrame(1, T0),
      recordsFrame([
        ...launch(last, 9n, T0),
        ...launch(last + 1n, 10n, T0 + 10_000n),
        ...launch(last + 2n, 11n, T0 + 20_000n),
      ]),
      sessionFrame(2, T0 + 100_000n),
    ]);
    const c = decode(file);
    expect(c.length).toBe(6);
    // Consecutive ids stay unique and a launch's records still pair; 2^32 (0 modulo 2^32, "none") becomes 1.
    expect([...c.correlation]).toEqual([4294967295, 4294967295, 1, 1, 2, 2]);
    expect([...c.externalId]).toEqual([9, 9, 10, 10, 11, 11]);
    expect(c.counts.correlationWrapped).toBe(6);
    expect(c.counts.externalCorrelation).toBe(3);
    const wrapped = c.diagnostics.filter((d) => d.code === 'correlation-wrap');
    expect(wrapped).toHaveLength(1);
    expect(wrapped[0]).toMatchObject({ severity: 'info' });
    expect(wrapped[0].message).toContain('folded into 1 .. 2^32 - 1');
    expect(c.diagnostics.filter((d) => d.severity === 'warning')).toEqual([]);
    expect(argsAt(c, 5).correlation).toBe(2);
    expect(argsAt(c, 3).correlation).toBe(1);
    // In the profile: a flow for each launch.
    const profile = importCapture(file);
    expect(profile.flows.length).toBe(6);
    expect(new Set([...Array(6).keys()].map((i) => profile.strings.get(profile.flows.id[i])))).toEqual(
      new Set(['4294967295', '1', '2']),
    );
  });

  it('skips records without timing and rejects implausible or short ones with one diagnostic each', () => {
    const c = decode(
      write([
        header(),
        recordsFrame([
          { bytes: msptiKernelRecord({ start: 0n, end: 0n, correlation: 1n }), pointed: 'k' },
          { bytes: msptiKernelRecord({ start: T0 + 10n, end: T0, correlation: 2n }), pointed: 'k' },
          { bytes: msptiExternalRecord(3n, 5n, 9) },
          {
            bytes: msptiApiRecord({ start: T0, end: T0 + 10n, correlation: 4n }).subarray(0, 40),
            pointed: 'x',
          },
          { bytes: msptiKernelRecord({ start: T0, end: T0 + 10n, correlation: 5n }), pointed: 'k' },
          { bytes: Buffer.from([99, 0, 0, 0, 0, 0, 0, 0]) },
        ]),
      ]),
    );
    expect(c.length).toBe(1);
    expect(c.correlation[0]).toBe(5);
    expect(c.counts).toMatchObject({ noTiming: 1, implausible: 2, malformed: 1, ignored: 1 });
    expect(c.diagnostics.filter((d) => d.code === 'layout')).toHaveLength(1);
    expect(c.diagnostics.filter((d) => d.code === 'record-size')).toHaveLength(1);
  });

  it('skips a damaged frame, naming its offset, and decodes the frames after it', () => {
    const good = recordsFrame(launch(1n, 1n, T0));
    const bad = Buffer.from(recordsFrame(launch(2n, 2n, T0 + 10_000n)));
    bad[30] ^= 0xff;
    const after = recordsFrame(launch(3n, 3n, T0 + 20_000n));
    const c = decode(write([header(), good, bad, after, endFrame(T0)]));
    expect([...c.correlation]).toEqual([1, 1, 3, 3]);
    expect(c.counts.badFrames).toBe(1);
    const diag = c.diagnostics.find((d) => d.code === 'frame-crc');
    expect(diag?.offset).toBe(64 + good.length);
    expect(c.names[c.name[3]]).toBe(MATMUL);
    expect(argsAt(c, 3)['Task Type']).toBe('KERNEL_AICORE');
  });

  it('decodes a large frame as the same records in small frames, and undoes all of one whose crc fails', () => {
    const records: RawRecord[] = [];
    for (let i = 1n; i <= 2000n; i++) {
      records.push(...launch(i, i * 10n, T0 + i * 10_000n));
      if (i % 2n) records[records.length - 1].pointed = msptiKernelStrings(`Kernel${i % 7n}`, `KERNEL_AIVEC`);
    }
    const big = recordsFrame(records);
    expect(big.length).toBeGreaterThan(256 * 1024);
    const small: Buffer[] = [];
    for (let i = 0; i < records.length; i += 30) small.push(recordsFrame(records.slice(i, i + 30)));
    const a = decode(write([header(), big, endFrame(T0)]));
    const b = decode(write([header(), ...small, endFrame(T0)]));
    expect(a.length).toBe(4000);
    for (const column of ['kind', 'start', 'end', 'correlation', 'externalId', 'thread'] as const)
      expect([...a[column]]).toEqual([...b[column]]);
    expect([...a.name].map((i) => a.names[i])).toEqual([...b.name].map((i) => b.names[i]));
    for (const i of [0, 1, 2, 3, 3999]) expect(argsAt(a, i)).toEqual(argsAt(b, i));

    const damaged = Buffer.from(big);
    damaged[damaged.length >> 1] ^= 0x5a;
    const afterIt = recordsFrame([
      {
        bytes: msptiKernelRecord({ start: T0, end: T0 + 100n, correlation: 7n }),
        pointed: msptiKernelStrings('Late', 'KERNEL_MIX_AIC'),
      },
    ]);
    const c = decode(write([header(), damaged, afterIt, endFrame(T0)]));
    expect([...c.correlation]).toEqual([7]);
    expect(Number.isNaN(c.externalId[0])).toBe(true); // its external record was in the damaged frame
    expect(c.counts).toMatchObject({ badFrames: 1, records: 1, kernel: 1, externalCorrelation: 0 });
    expect(argsAt(c, 0)['Task Type']).toBe('KERNEL_MIX_AIC');
  });

  it('rejects a vendor this build does not decode with one line', () => {
    const file = write([fpcHeader({ vendor: 99 })]);
    // Every vendor of the table, by label and id.
    expect(() => decode(file)).toThrow(
      /capture from vendor 99 at offset 12: this build decodes CUPTI \(1\), MSPTI \(2\), ROCtracer \(3\)(, [^,]+ \(\d+\))*$/,
    );
  });
});

describe('importCapture of an MSPTI capture', () => {
  it('puts kernels on NPU stream tracks and API calls on their thread, one flow per correlation id', () => {
    const profile = importCapture(
      write([
        header(),
        sessionFrame(1, T0),
        recordsFrame(launch(80n, 3n, T0)),
        sessionFrame(2, T0 + 100_000n),
      ]),
    );
    const kinds = [...profile.slices.kind.subarray(0, profile.slices.length)];
    const kernel = kinds.indexOf(SliceKind.Kernel);
    const runtime = kinds.indexOf(SliceKind.Runtime);
    expect(profile.tracks[profile.slices.track[kernel]]).toMatchObject({
      kind: 'device',
      processName: 'NPU 0',
      name: 'Stream 3',
    });
    expect(profile.tracks[profile.slices.track[runtime]]).toMatchObject({
      kind: 'cpu',
      pid: '4242',
      tid: '4243',
    });
    expect(profile.categoryOf(runtime)).toBe('privateuse1_runtime');
    expect(profile.categoryOf(kernel)).toBe('kernel');
    expect(profile.flows.length).toBe(2);
    expect(profile.slices.externalId[kernel]).toBe(3);
    expect(profile.argsOf(kernel)['Task Type']).toBe('KERNEL_AICORE');
    expect(profile.metadata.capture).toMatchObject({ vendor: 'mspti' });
  });
});

describe('flagprof decode of an MSPTI capture', () => {
  beforeAll(buildCli, 120_000);

  it('says MSPTI and prints the API names and kernel metadata', () => {
    const file = write([header(), recordsFrame(launch(80n, 0n, T0)), endFrame(T0)]);
    const { firstLine, events } = cliDecode(file);
    expect(firstLine).toContain(`${file}: MSPTI API 260000, format 1`);
    const kernel = events.find((e) => e.kind === 'kernel')!;
    expect(kernel.name).toBe(MATMUL);
    expect(kernel.external_correlation_id).toBe(0);
    expect(kernel.metadata['Task Type']).toBe('KERNEL_AICORE');
    expect(events.find((e) => e.kind === 'runtime')?.name).toBe('aclnnMatmul');
  });
});
