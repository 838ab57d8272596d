/**
 * The CUPTI clones' decode side through the addon (MetaX MCPTI, Moore Threads MUPTI, Enflame TOPSPTI), one table
 * row each, on captures written here record by record at CUPTI's offsets with each vendor's record sizes: the
 * vendor's clock mapped through the calibration pairs (rate included), runtime and driver names only from the
 * names frames the agent writes after the final flush (never CUDA's cbid table), the vendor's generic labels,
 * torch ids through external-correlation records, and a record of another size refused as malformed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { DecodedCapture } from '../../extension/import/addon';
import {
  KIND,
  VENDOR,
  apiRecord,
  calibrationFrame,
  endFrame,
  ensureNativeBuilt,
  externalRecord,
  fpcHeader,
  kernelRecord,
  memcpyRecord,
  memsetRecord,
  namesFrame,
  recordsFrame,
  sessionFrame,
  type RawRecord,
} from '../helpers/native';
import { argsAt, captureWriter, decodeWithArgs } from '../helpers/capture';

interface Clone {
  vendor: 'mcpti' | 'mupti' | 'topspti';
  sizes: { kernel: number; memcpy: number; memset: number };
  /** Their generic labels for ids no names frame named. */
  runtime: string;
  driver: string;
  /** The vendor clock's rate against realtime (TOPSPTI's device clock runs its own). */
  rate: number;
}

const CLONES: Clone[] = [
  {
    vendor: 'mcpti',
    sizes: { kernel: 200, memcpy: 88, memset: 88 },
    runtime: 'mcRuntime',
    driver: 'mcDriver',
    rate: 1,
  },
  {
    vendor: 'mupti',
    sizes: { kernel: 168, memcpy: 80, memset: 80 },
    runtime: 'musaRuntime',
    driver: 'musaDriver',
    rate: 1,
  },
  {
    vendor: 'topspti',
    sizes: { kernel: 144, memcpy: 64, memset: 64 },
    runtime: 'topsRuntime',
    driver: 'topsDriver',
    rate: 1.001,
  },
];

const T0 = 1_790_000_000_000_000_000n;
// A vendor clock counting from boot: an unmapped time would show.
const V0 = 7_000_000_000_000n;
const SPAN = 2_000_000_000n; // between the calibration pairs
const LAUNCH = 17; // the vendor's launch id: CUDA's table names 17 cudaGetDevice
const UNNAMED = 211; // cudaLaunchKernel in CUDA's table: a clone names it nothing
const write = captureWriter('clones-decode');

beforeAll(() => {
  ensureNativeBuilt();
}, 300_000);

describe.each(CLONES)('decodeCapture of $vendor captures', (row) => {
  // Vendor time v maps to T0 + (v - V0) / rate.
  const vendorAt = (realOffset: bigint) => V0 + BigInt(Math.round(Number(realOffset) * row.rate));
  const header = () =>
    fpcHeader({ vendor: VENDOR[row.vendor], apiVersion: 12, vendorNs: V0, realtimeNs: T0 });
  const calibration = () => [calibrationFrame(1, V0, T0), calibrationFrame(2, vendorAt(SPAN), T0 + SPAN)];
  const absolute = (c: DecodedCapture, t: number) => c.baseNs + BigInt(t);

  function launch(): RawRecord[] {
    const t = 1_000_000_000n;
    return [
      { bytes: externalRecord(40, 6n) },
      { bytes: apiRecord({ cbid: LAUNCH, start: vendorAt(t), end: vendorAt(t + 4000n), correlation: 40 }) },
      {
        bytes: kernelRecord({
          start: vendorAt(t + 10_000n),
          end: vendorAt(t + 30_000n),
          correlation: 40,
          grid: [2, 2, 1],
          block: [256, 1, 1],
          size: row.sizes.kernel,
        }),
        pointed: 'vendor_gemm_128x128',
      },
      {
        bytes: memcpyRecord({
          start: vendorAt(t + 40_000n),
          end: vendorAt(t + 41_000n),
          correlation: 41,
          bytes: 4096n,
          copyKind: 2,
          src: 3,
          dst: 1,
          size: row.sizes.memcpy,
        }),
      },
      {
        bytes: memsetRecord({
          start: vendorAt(t + 42_000n),
          end: vendorAt(t + 43_000n),
          correlation: 42,
          bytes: 64n,
          size: row.sizes.memset,
        }),
      },
      {
        bytes: apiRecord({
          cbid: UNNAMED,
          start: vendorAt(t + 50_000n),
          end: vendorAt(t + 51_000n),
          correlation: 43,
        }),
      },
      {
        bytes: apiRecord({
          kind: KIND.driver,
          cbid: 3,
          start: vendorAt(t + 52_000n),
          end: vendorAt(t + 53_000n),
          correlation: 44,
        }),
      },
      {
        bytes: apiRecord({
          kind: KIND.driver,
          cbid: 9,
          start: vendorAt(t + 54_000n),
          end: vendorAt(t + 55_000n),
          correlation: 45,
        }),
      },
    ];
  }

  const capture = (records: RawRecord[]) =>
    decodeWithArgs(
      write([
        header(),
        ...calibration(),
        sessionFrame(1, T0),
        recordsFrame(records),
        namesFrame(2, [[LAUNCH, `${row.vendor}LaunchKernel`]]),
        namesFrame(1, [[3, `${row.vendor}CtxSynchronize`]]),
        sessionFrame(2, T0 + SPAN),
        endFrame(T0 + SPAN + 1n),
      ]),
    );

  it('maps the vendor clock through the calibration pairs, rate included', () => {
    const c = capture(launch());
    expect(c.vendor).toBe(row.vendor);
    const kernel = [...c.kind].indexOf(0);
    expect(Number(absolute(c, c.start[kernel]) - (T0 + 1_000_010_000n))).toBeLessThanOrEqual(1);
    expect(Math.abs(c.end[kernel] - c.start[kernel] - 20_000)).toBeLessThanOrEqual(1);
  });

  it('names calls only from the names frames, else with its generic labels keeping the id', () => {
    const c = capture(launch());
    const runtimes = [...Array(c.length).keys()].filter((i) => c.kind[i] === 3);
    const drivers = [...Array(c.length).keys()].filter((i) => c.kind[i] === 4);
    expect(runtimes.map((i) => c.names[c.name[i]])).toEqual([`${row.vendor}LaunchKernel`, row.runtime]);
    expect(drivers.map((i) => c.names[c.name[i]])).toEqual([`${row.vendor}CtxSynchronize`, row.driver]);
    expect(argsAt(c, runtimes[1])).toMatchObject({ cbid: UNNAMED, correlation: 43 });
  });

  it('links the launch, its kernel and the torch id; copies and fills read at its record sizes', () => {
    const c = capture(launch());
    const kernel = [...c.kind].indexOf(0);
    const memcpy = [...c.kind].indexOf(1);
    const memset = [...c.kind].indexOf(2);
    expect(c.names[c.name[kernel]]).toBe('vendor_gemm_128x128');
    expect(c.externalId[kernel]).toBe(6);
    expect(argsAt(c, kernel)).toMatchObject({
      grid: [2, 2, 1],
      block: [256, 1, 1],
      correlation: 40,
      'External id': 6,
    });
    expect(c.names[c.name[memcpy]]).toBe('Memcpy DtoH (Device -> Pageable)');
    expect(argsAt(c, memcpy)).toMatchObject({ bytes: 4096 });
    expect(argsAt(c, memset)).toMatchObject({ bytes: 64, value: 0 });
    expect(c.counts).toMatchObject({
      kernel: 1,
      memcpy: 1,
      memset: 1,
      runtime: 2,
      driver: 2,
      externalCorrelation: 1,
    });
    expect(c.counts.malformed).toBe(0);
  });

  it('refuses a record of a size the vendor does not emit, and keeps the rest', () => {
    const other = row.sizes.kernel === 200 ? 216 : 200;
    const records = launch();
    records.push({
      bytes: kernelRecord({
        start: vendorAt(1_100_000_000n),
        end: vendorAt(1_100_001_000n),
        correlation: 50,
        size: other,
      }),
      pointed: 'wrong_size',
    });
    const c = capture(records);
    expect(c.counts.malformed).toBe(1);
    expect(c.names.includes('wrong_size') && [...c.name].some((n) => c.names[n] === 'wrong_size')).toBe(
      false,
    );
    expect(c.counts.kernel).toBe(1);
  });
});
