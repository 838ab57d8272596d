/**
 * The rocprofiler-sdk decode side through the addon, on captures written here record by record at the offsets of
 * the public rocprofiler-sdk headers (buffer_tracing.h, fwd.h; not the tracer's mirror, so the two check each
 * other): kernel dispatches named by the string the agent attached from the code-object service, HIP API records
 * in both layouts (56 bytes before `ancestor`, 64 with it), memory copies, the agent's external-correlation record,
 * the boottime clock mapped through the calibration pairs, 64-bit correlation ids, a record of a size no layout has.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { DecodedCapture } from '../../extension/import/addon';
import {
  VENDOR,
  calibrationFrame,
  endFrame,
  ensureNativeBuilt,
  fpcHeader,
  namesFrame,
  RPS_KIND as KIND,
  recordsFrame,
  rpsDispatchRecord as dispatch,
  rpsExternalRecord as external,
  rpsHipApiRecord as hipApi,
  rpsMemoryCopyRecord as memoryCopy,
  sessionFrame,
  type RawRecord,
} from '../helpers/native';
import { argsAt, captureWriter, decodeWithArgs } from '../helpers/capture';

const T0 = 1_790_000_000_000_000_000n;
// CLOCK_BOOTTIME: seconds since boot, far from realtime.
const V0 = 9_000_000_000_000n;
const HIP_LAUNCH = 113;
const write = captureWriter('rocprofiler-decode');

beforeAll(() => {
  ensureNativeBuilt();
}, 300_000);

function capture(records: RawRecord[]): DecodedCapture {
  return decodeWithArgs(
    write([
      fpcHeader({ vendor: VENDOR.rocprofiler, apiVersion: 601, vendorNs: V0, realtimeNs: T0 }),
      calibrationFrame(1, V0, T0),
      sessionFrame(1, T0),
      recordsFrame(records),
      namesFrame(KIND.hipApi, [[HIP_LAUNCH, 'hipExtModuleLaunchKernel']]),
      sessionFrame(2, T0 + 2_000_000_000n),
      endFrame(T0 + 2_000_000_001n),
    ]),
  );
}

describe.each([true, false])(
  'decodeCapture of rocprofiler-sdk captures (HIP records with ancestor: %s)',
  (ancestor) => {
    const launch = (correlation: bigint, id: bigint | null, t: bigint): RawRecord[] => [
      ...(id === null ? [] : [{ bytes: external(correlation, id) }]),
      { bytes: hipApi({ correlation, start: V0 + t, end: V0 + t + 4000n, ancestor }) },
      {
        bytes: dispatch({ correlation, start: V0 + t + 6000n, end: V0 + t + 26_000n }),
        pointed: 'Cijk_gemm',
      },
    ];

    it('links the HIP call, its dispatch and the torch id, on the boottime clock mapped to realtime', () => {
      const c = capture([
        ...launch(80n, 0n, 1_000_000n),
        {
          bytes: memoryCopy({ correlation: 81n, start: V0 + 1_100_000n, end: V0 + 1_102_000n, bytes: 4096n }),
        },
      ]);
      expect(c.vendor).toBe('rocprofiler');
      const runtime = [...c.kind].indexOf(3);
      const kernel = [...c.kind].indexOf(0);
      const copy = [...c.kind].indexOf(1);
      expect(c.names[c.name[runtime]]).toBe('hipExtModuleLaunchKernel');
      expect(c.names[c.name[kernel]]).toBe('Cijk_gemm');
      expect([c.correlation[runtime], c.correlation[kernel]]).toEqual([80, 80]);
      expect([c.externalId[runtime], c.externalId[kernel]]).toEqual([0, 0]);
      expect(c.baseNs + BigInt(c.start[kernel])).toBe(T0 + 1_006_000n);
      expect(c.end[kernel] - c.start[kernel]).toBe(20_000);
      expect(argsAt(c, kernel)).toMatchObject({
        grid: [65536, 1, 1],
        block: [256, 1, 1],
        correlation: 80,
        'External id': 0,
      });
      expect(argsAt(c, runtime)).toMatchObject({ cid: HIP_LAUNCH, cbid: HIP_LAUNCH });
      expect(c.names[c.name[copy]]).toBe('Memcpy DtoH (Device -> Host)');
      expect(argsAt(c, copy)).toMatchObject({ bytes: 4096, kind: 'DtoH' });
      expect(c.counts).toMatchObject({
        kernel: 1,
        memcpy: 1,
        runtime: 1,
        externalCorrelation: 1,
        malformed: 0,
      });
    });

    it('folds a 64-bit correlation id into 32 bits, never 0, with its torch id', () => {
      const wide = 2n ** 32n + 5n;
      const c = capture(launch(wide, 6n, 2_000_000n));
      const kernel = [...c.kind].indexOf(0);
      expect([c.correlation[kernel], c.externalId[kernel]]).toEqual([6, 6]); // ((2^32 + 5) - 1) mod (2^32 - 1) + 1
      expect(c.counts.correlationWrapped).toBeGreaterThan(0);
    });

    it('refuses a record of a size no layout has, and keeps the rest', () => {
      const odd = hipApi({ correlation: 90n, start: V0, end: V0 + 1n, ancestor });
      const cut = Buffer.from(odd.subarray(0, 40));
      cut.writeBigUInt64LE(40n, 0);
      const c = capture([...launch(80n, null, 1_000_000n), { bytes: cut }]);
      expect(c.counts.malformed).toBe(1);
      expect(c.counts.runtime).toBe(1);
    });
  },
);
