/**
 * The shared tracer's decode side through the addon, on captures written here record by record at the vendor's
 * published offsets: versions by size, names, metadata, external correlation, clocks, damaged files.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { AddonLoadError, addonCandidates } from '../../extension/import/addon';
import { importCapture } from '../../extension/import/capture';
import { SliceKind } from '../../extension/model/profile';
import {
  ROOT,
  apiRecord,
  calibrationFrame,
  deviceRecord,
  droppedFrame,
  endFrame,
  ensureNativeBuilt,
  externalRecord,
  fpcHeader,
  frame,
  kernelRecord,
  memcpyRecord,
  memsetRecord,
  namesFrame,
  recordsFrame,
  sessionFrame,
  KIND,
  type RawRecord,
} from '../helpers/native';
import { argsAt, captureWriter, decodeWithArgs } from '../helpers/capture';

const T0 = 1_790_000_000_000_000_000n; // epoch ns, 2026
const write = captureWriter('native');

const decode = decodeWithArgs;

const MANGLED =
  '_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_';
const DEMANGLED =
  'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)';

/** One launch as CUPTI delivers it: external correlation, runtime call, then the kernel. */
function standardCapture(externalId: bigint): string {
  return write([
    fpcHeader(),
    sessionFrame(1, T0),
    recordsFrame([
      { bytes: deviceRecord(0) },
      { bytes: externalRecord(80, externalId) },
      { bytes: apiRecord({ cbid: 211, start: T0 + 1000n, end: T0 + 5000n, correlation: 80 }) },
      {
        bytes: kernelRecord({
          start: T0 + 6000n,
          end: T0 + 9000n,
          correlation: 80,
          grid: [864, 1, 1],
          block: [256, 1, 1],
          registers: 47,
        }),
        pointed: MANGLED,
      },
    ]),
    sessionFrame(2, T0 + 100_000n),
    endFrame(T0 + 100_001n),
  ]);
}

beforeAll(() => {
  ensureNativeBuilt();
}, 300_000);

describe('decodeCapture', () => {
  it('decodes a launch: demangled name, table runtime name, both correlation schemes kept apart', () => {
    const c = decode(standardCapture(3n));
    expect(c.length).toBe(2);
    expect(c.closed).toBe(true);
    const kernel = [...c.kind].indexOf(0);
    const runtime = [...c.kind].indexOf(3);
    expect(c.names[c.name[kernel]]).toBe(DEMANGLED);
    expect(c.names[c.name[runtime]]).toBe('cudaLaunchKernel');
    expect(c.correlation[kernel]).toBe(80);
    expect(c.correlation[runtime]).toBe(80);
    expect(c.externalId[kernel]).toBe(3);
    expect(c.externalId[runtime]).toBe(3);
    expect(c.thread[runtime]).toBe(4243);
    expect(c.process[runtime]).toBe(4242);
    expect(c.baseNs).toBe(T0);
    expect(c.start[kernel]).toBe(6000);
    expect(c.end[kernel]).toBe(9000);
    expect(c.counts).toMatchObject({
      kernel: 1,
      runtime: 1,
      externalCorrelation: 1,
      deviceRecords: 1,
      badFrames: 0,
    });
  });

  it('keeps External id 0: a valid torch id, not "absent"', () => {
    const c = decode(standardCapture(0n));
    expect(c.externalId[0]).toBe(0);
    expect(c.externalId[1]).toBe(0);
    expect(argsAt(c, 0)['External id']).toBe(0);
  });

  it('emits the 13 kernel metadata fields as torch-cuda does, occupancy from the recorded device', () => {
    const c = decode(standardCapture(3n));
    const kernel = [...c.kind].indexOf(0);
    const args = argsAt(c, kernel);
    expect(Object.keys(args).sort()).toEqual(
      [
        'External id',
        'block',
        'blocks per SM',
        'context',
        'correlation',
        'device',
        'est. achieved occupancy %',
        'grid',
        'queued',
        'registers per thread',
        'shared memory',
        'stream',
        'warps per SM',
      ].sort(),
    );
    expect(args.grid).toEqual([864, 1, 1]);
    expect(args.block).toEqual([256, 1, 1]);
    expect(args['registers per thread']).toBe(47);
    expect(args['blocks per SM']).toBeCloseTo(864 / 132, 5);
    expect(args['warps per SM']).toBeCloseTo((864 / 132) * 8, 4);
    // 47 registers: ceil(47*32, 256) * 8 warps = 12288 per block -> 5 blocks of 256 threads fit per SM, 6.5 wanted.
    expect(args['est. achieved occupancy %']).toBe(62);
    expect(args.correlation).toBe(80);
    expect(args.stream).toBe(7);
    const runtimeArgs = argsAt(c, [...c.kind].indexOf(3));
    expect(runtimeArgs).toEqual({ 'External id': 3, cbid: 211, correlation: 80 });
  });

  it('omits occupancy fields, never invents them, when no device record was captured', () => {
    const c = decode(
      write([
        fpcHeader(),
        recordsFrame([
          { bytes: kernelRecord({ start: T0, end: T0 + 10n, correlation: 1 }), pointed: 'plain_kernel' },
        ]),
      ]),
    );
    const args = argsAt(c, 0);
    expect(args).not.toHaveProperty('est. achieved occupancy %');
    expect(args).not.toHaveProperty('External id');
    expect(args.grid).toEqual([1, 1, 1]);
    expect(c.names[c.name[0]]).toBe('plain_kernel');
  });

  it('recognises older kernel, memcpy and memset versions by size', () => {
    const records = [144, 160, 168, 176, 200, 208, 216].map((size, i) => ({
      bytes: kernelRecord({
        size,
        start: T0 + BigInt(i * 100),
        end: T0 + BigInt(i * 100 + 50),
        correlation: 10 + i,
        kind: i % 2 ? KIND.kernel : KIND.concurrentKernel,
      }),
      pointed: `k${size}`,
    }));
    const c = decode(
      write([
        fpcHeader(),
        recordsFrame([
          ...records,
          { bytes: memcpyRecord({ size: 64, start: T0, end: T0 + 100n, correlation: 30, bytes: 4096n }) },
          {
            bytes: memcpyRecord({
              size: 88,
              start: T0,
              end: T0 + 100n,
              correlation: 31,
              bytes: 4096n,
              copyKind: 2,
              src: 3,
              dst: 2,
            }),
          },
          { bytes: memsetRecord({ start: T0, end: T0 + 100n, correlation: 32, bytes: 100n }) },
          { bytes: kernelRecord({ size: 120, start: T0, end: T0 + 1n, correlation: 40 }) }, // too short for any version
        ]),
      ]),
    );
    expect(c.counts.kernel).toBe(7);
    expect(c.counts.memcpy).toBe(2);
    expect(c.counts.memset).toBe(1);
    expect(c.counts.malformed).toBe(1);
    expect(c.diagnostics.some((d) => d.code === 'record-size' && d.severity === 'warning')).toBe(true);
    for (let i = 0; i < 7; i++) expect(c.correlation[i]).toBe(10 + i);
    const names = [...c.name].map((n) => c.names[n]);
    expect(names).toContain('Memcpy HtoD (Pageable -> Device)');
    expect(names).toContain('Memcpy DtoH (Device -> Pinned)');
    expect(names).toContain('Memset (Device)');
    const memcpyArgs = argsAt(c, 7);
    expect(memcpyArgs.bytes).toBe(4096);
    expect(memcpyArgs['memory bandwidth (GB/s)']).toBeCloseTo(40.96, 6);
  });

  it('names runtime calls from the generated table; an unknown id keeps the generic label and its cbid', () => {
    const c = decode(
      write([
        fpcHeader(),
        recordsFrame([
          { bytes: apiRecord({ cbid: 430, start: T0, end: T0 + 10n, correlation: 1 }) },
          { bytes: apiRecord({ cbid: 505, start: T0, end: T0 + 10n, correlation: 2 }) },
          { bytes: apiRecord({ cbid: 99999, start: T0, end: T0 + 10n, correlation: 3 }) },
          { bytes: apiRecord({ kind: KIND.driver, cbid: 307, start: T0, end: T0 + 10n, correlation: 4 }) },
          { bytes: apiRecord({ kind: KIND.driver, cbid: 12345, start: T0, end: T0 + 10n, correlation: 5 }) },
        ]),
        // Names the agent resolved after the flush: Kineto drops the _v<version> suffix.
        namesFrame(1, [[307, 'cuLaunchKernel_v7000']]),
      ]),
    );
    const names = [...c.name].map((n) => c.names[n]);
    expect(names).toEqual([
      'cudaLaunchKernelExC',
      '__cudaLaunchKernel',
      'cudaRuntime',
      'cuLaunchKernel',
      'cudaDriver',
    ]);
    expect(argsAt(c, 2)).toEqual({ cbid: 99999, correlation: 3 });
    expect([...c.kind]).toEqual([3, 3, 3, 4, 4]);
  });

  it('skips records without timing and rejects implausible ones with a layout diagnostic', () => {
    const c = decode(
      write([
        fpcHeader(),
        recordsFrame([
          { bytes: kernelRecord({ start: 0n, end: 0n, correlation: 1 }), pointed: 'k' },
          { bytes: kernelRecord({ start: T0 + 10n, end: T0, correlation: 2 }), pointed: 'k' },
          { bytes: externalRecord(3, 5n, 77) },
          { bytes: kernelRecord({ start: T0, end: T0 + 10n, correlation: 4 }), pointed: 'k' },
        ]),
      ]),
    );
    expect(c.length).toBe(1);
    expect(c.counts.noTiming).toBe(1);
    expect(c.counts.implausible).toBe(2);
    expect(c.diagnostics.filter((d) => d.code === 'layout')).toHaveLength(1);
  });

  it('maps the vendor clock to realtime through the calibration pairs', () => {
    const offset = 1_000_000n;
    const c = decode(
      write([
        fpcHeader({ vendorNs: T0 - offset - 50n, realtimeNs: T0 - 50n }),
        calibrationFrame(1, T0 - offset, T0),
        sessionFrame(1, T0),
        recordsFrame([
          {
            bytes: kernelRecord({ start: T0 - offset + 500n, end: T0 - offset + 900n, correlation: 1 }),
            pointed: 'k',
          },
        ]),
      ]),
    );
    expect(c.start[0]).toBe(500);
    expect(c.end[0]).toBe(900);
  });

  it('skips a frame with a wrong crc, naming its offset, and decodes the frames after it', () => {
    const good = recordsFrame([
      { bytes: apiRecord({ cbid: 211, start: T0, end: T0 + 10n, correlation: 1 }) },
    ]);
    const bad = Buffer.from(
      recordsFrame([{ bytes: apiRecord({ cbid: 211, start: T0, end: T0 + 10n, correlation: 2 }) }]),
    );
    bad[20] ^= 0xff;
    const after = recordsFrame([
      { bytes: apiRecord({ cbid: 211, start: T0, end: T0 + 10n, correlation: 3 }) },
    ]);
    const c = decode(write([fpcHeader(), good, bad, after, endFrame(T0)]));
    const badOffset = 64 + good.length;
    expect([...c.correlation]).toEqual([1, 3]);
    expect(c.counts.badFrames).toBe(1);
    const diag = c.diagnostics.find((d) => d.code === 'frame-crc');
    expect(diag?.offset).toBe(badOffset);
    expect(diag?.message).toContain(`offset ${badOffset}`);
  });

  // Frames of 256 KiB and more are decoded while their checksum is computed; what such a frame did must be
  // undone when its checksum fails.
  function launches(first: number, count: number): RawRecord[] {
    const records: RawRecord[] = [];
    for (let corr = first; corr < first + count; corr++) {
      const t = T0 + BigInt(corr) * 4000n;
      records.push({ bytes: externalRecord(corr, BigInt(corr) * 10n) });
      records.push({ bytes: apiRecord({ cbid: 211, start: t, end: t + 1500n, correlation: corr }) });
      records.push({
        bytes: kernelRecord({ start: t + 2000n, end: t + 3500n, correlation: corr }),
        pointed: corr % 2 ? MANGLED : 'plain_kernel',
      });
    }
    return records;
  }

  it('decodes a large frame exactly as the same records in small frames', () => {
    const records = launches(1, 1200);
    const big = recordsFrame(records);
    expect(big.length).toBeGreaterThan(256 * 1024);
    const small: Buffer[] = [];
    for (let i = 0; i < records.length; i += 30) small.push(recordsFrame(records.slice(i, i + 30)));
    const a = decode(write([fpcHeader(), big, endFrame(T0)]));
    const b = decode(write([fpcHeader(), ...small, endFrame(T0)]));
    expect(a.length).toBe(2400);
    expect(a.counts.badFrames).toBe(0);
    for (const column of ['kind', 'start', 'end', 'correlation', 'externalId', 'thread', 'stream'] as const)
      expect([...a[column]]).toEqual([...b[column]]);
    expect([...a.name].map((i) => a.names[i])).toEqual([...b.name].map((i) => b.names[i]));
    expect(a.externalId[1]).toBe(10);
    expect(a.names[a.name[1]]).toBe(DEMANGLED);
  });

  it('drops everything a large frame with a wrong crc carried, external correlations included', () => {
    const bad = Buffer.from(recordsFrame(launches(1, 1200)));
    bad[bad.length >> 1] ^= 0x5a;
    // A kernel in the next frame whose external correlation record was in the damaged frame.
    const t = T0 + 10_000_000n;
    const after = recordsFrame([
      { bytes: kernelRecord({ start: t, end: t + 100n, correlation: 7 }), pointed: 'plain_kernel' },
    ]);
    const c = decode(write([fpcHeader(), bad, after, endFrame(T0)]));
    expect([...c.correlation]).toEqual([7]);
    expect(Number.isNaN(c.externalId[0])).toBe(true);
    expect(c.counts.badFrames).toBe(1);
    expect(c.counts.records).toBe(1);
    expect(c.counts.kernel).toBe(1);
    expect(c.diagnostics.find((d) => d.code === 'frame-crc')?.offset).toBe(64);
  });

  it('skips a frame whose length is wrong and resynchronises on the next intact frame', () => {
    const first = Buffer.from(
      recordsFrame([{ bytes: apiRecord({ cbid: 211, start: T0, end: T0 + 10n, correlation: 1 }) }]),
    );
    first.writeUInt32LE(first.readUInt32LE(4) + 9, 4); // a length that no longer matches
    const next = recordsFrame([
      { bytes: apiRecord({ cbid: 211, start: T0, end: T0 + 10n, correlation: 2 }) },
    ]);
    const c = decode(write([fpcHeader(), first, next, endFrame(T0)]));
    expect([...c.correlation]).toEqual([2]);
    expect(c.diagnostics.some((d) => d.offset === 64 && d.severity === 'warning')).toBe(true);
  });

  it('decodes the prefix of a truncated capture and says so', () => {
    const full = Buffer.concat([
      fpcHeader(),
      recordsFrame([{ bytes: apiRecord({ cbid: 211, start: T0, end: T0 + 10n, correlation: 1 }) }]),
      recordsFrame([{ bytes: apiRecord({ cbid: 211, start: T0, end: T0 + 10n, correlation: 2 }) }]),
    ]);
    const c = decode(write([full.subarray(0, full.length - 7)]));
    expect([...c.correlation]).toEqual([1]);
    expect(c.closed).toBe(false);
    expect(c.diagnostics.map((d) => d.code)).toEqual(expect.arrayContaining(['frame-length', 'no-end']));
  });

  it('counts records the vendor dropped', () => {
    const c = decode(write([fpcHeader(), droppedFrame(7n), droppedFrame(5n)]));
    expect(c.counts.dropped).toBe(12);
    expect(c.diagnostics.find((d) => d.code === 'dropped')?.message).toContain('12');
  });

  it('carries the diagnostics the agent recorded', () => {
    const text = '[flagos] FLAGOS_TRACE: "maybe" is not a boolean; using the default';
    const payload = Buffer.alloc(16);
    payload.writeUInt8(1, 0);
    payload.writeUInt8(0, 1);
    payload.writeUInt16LE(2, 2);
    payload.writeUInt32LE(Buffer.byteLength(text), 4);
    payload.writeBigUInt64LE(T0, 8);
    const c = decode(
      write([fpcHeader(), frame(5, Buffer.concat([payload, Buffer.from('E1'), Buffer.from(text)]))]),
    );
    expect(c.diagnostics[0]).toMatchObject({
      code: 'E1',
      message: text,
      severity: 'warning',
      gated: false,
      fromCapture: true,
    });
  });

  it('rejects a file that is not a capture, or of an unknown format version, with one line', () => {
    const notCapture = write([Buffer.from('{"traceEvents": []}')]);
    expect(() => decode(notCapture)).toThrow(
      new RegExp(`^${notCapture}: not a FlagOS capture \\(bad magic at offset 0`),
    );
    const future = write([fpcHeader({ version: 9 })]);
    expect(() => decode(future)).toThrow(/unsupported capture format version 9 at offset 8/);
    for (const file of [notCapture, future]) {
      try {
        decode(file);
      } catch (error) {
        expect((error as Error).message.split('\n')).toHaveLength(1);
      }
    }
  });
});

describe('addon loading', () => {
  it('lists build/Release and prebuilds/<platform>-<arch> among the places it tries', () => {
    const candidates = addonCandidates();
    expect(candidates.some((c) => c.endsWith(path.join('build', 'Release', 'flagprof.node')))).toBe(true);
    expect(
      candidates.some((c) =>
        c.endsWith(path.join('prebuilds', `${process.platform}-${process.arch}`, 'flagprof.node')),
      ),
    ).toBe(true);
    const error = new AddonLoadError(candidates.map((c) => `${c} (not found)`));
    for (const c of candidates) expect(error.message).toContain(c);
  });
});

describe('importCapture', () => {
  it('puts device events on stream tracks and runtime calls on their thread, with one paired flow per correlation id', () => {
    const profile = importCapture(standardCapture(3n));
    const kinds = [...profile.slices.kind.subarray(0, profile.slices.length)];
    expect(kinds.sort()).toEqual([SliceKind.Runtime, SliceKind.Kernel].sort());
    const kernel =
      kinds.indexOf(SliceKind.Kernel) >= 0 ? [...profile.slices.kind].indexOf(SliceKind.Kernel) : -1;
    const runtime = [...profile.slices.kind].indexOf(SliceKind.Runtime);
    expect(profile.tracks[profile.slices.track[kernel]]).toMatchObject({
      kind: 'device',
      pid: '0',
      tid: 'stream 7',
    });
    expect(profile.tracks[profile.slices.track[runtime]]).toMatchObject({
      kind: 'cpu',
      pid: '4242',
      tid: '4243',
    });
    expect(profile.flows.length).toBe(2);
    expect(profile.strings.get(profile.flows.id[0])).toBe('80');
    expect(profile.flows.slice[0]).toBe(runtime);
    expect(profile.flows.slice[1]).toBe(kernel);
    expect(profile.slices.externalId[kernel]).toBe(3);
    expect(profile.argsOf(kernel).grid).toEqual([864, 1, 1]);
    expect(profile.absoluteNs(profile.slices.start[kernel])).toBe(T0 + 6000n);
    // What the capture adds to the metadata must survive JSON (no BigInt).
    expect(() => JSON.stringify(profile.metadata)).not.toThrow();
  });

  it('leaves out and counts events outside the capture window (strict containment)', () => {
    const file = write([
      fpcHeader(),
      sessionFrame(1, T0),
      recordsFrame([
        { bytes: apiRecord({ cbid: 211, start: T0 - 10n, end: T0 + 10n, correlation: 1 }) }, // in flight at start
        { bytes: apiRecord({ cbid: 211, start: T0 + 10n, end: T0 + 20n, correlation: 2 }) },
        { bytes: kernelRecord({ start: T0 + 900n, end: T0 + 1100n, correlation: 2 }), pointed: 'k' }, // ends after stop
      ]),
      sessionFrame(2, T0 + 1000n),
    ]);
    const profile = importCapture(file);
    expect(profile.slices.length).toBe(1);
    expect(profile.flows.length).toBe(0);
    expect(
      profile.warnings.some((w) =>
        /2 capture events fell outside the capture window.*kernel=1 .*runtime=1/.test(w.message),
      ),
    ).toBe(true);
  });

  it('turns a damaged capture into a one-line import error naming the file', () => {
    const file = write([Buffer.from('nonsense that is long enough to not be a header, really it is')]);
    expect(() => importCapture(file)).toThrow(`${file}: not a FlagOS capture`);
  });
});

describe('flagprof decode', () => {
  const cli = path.join(ROOT, 'dist', 'cli.js');
  beforeAll(() => {
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
  }, 120_000);

  it('prints events, counts and diagnostics as JSON with exact epoch nanoseconds', () => {
    const file = standardCapture(0n);
    const out = JSON.parse(
      execFileSync(process.execPath, [cli, 'decode', file, '--json'], { encoding: 'utf8' }),
    ) as {
      counts: Record<string, number>;
      events: {
        kind: string;
        start_ns: string;
        external_correlation_id: number | null;
        name: string;
        metadata: Record<string, unknown>;
      }[];
    };
    expect(out.counts.kernel).toBe(1);
    const kernel = out.events.find((e) => e.kind === 'kernel')!;
    expect(kernel.start_ns).toBe((T0 + 6000n).toString());
    expect(kernel.external_correlation_id).toBe(0);
    expect(kernel.name).toBe(DEMANGLED);
    expect(kernel.metadata.grid).toEqual([864, 1, 1]);
  });

  it('exits 2 with one line for a file that is not a capture', () => {
    const file = write([fpcHeader({ version: 2 })]);
    const run = spawnSync(process.execPath, [cli, 'decode', file], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(`${file}: unsupported capture format version 2`);
  });

  it('keeps decoding after a damaged frame and names its offset', () => {
    const good = recordsFrame([
      { bytes: apiRecord({ cbid: 211, start: T0, end: T0 + 10n, correlation: 1 }) },
    ]);
    const bad = Buffer.from(good);
    bad[bad.length - 1] ^= 1;
    const file = write([fpcHeader(), bad, good]);
    const out = execFileSync(process.execPath, [cli, 'decode', file], { encoding: 'utf8' });
    expect(out).toContain('warning frame-crc @64: frame at offset 64: crc32c mismatch');
    expect(out).toMatch(/events \(1\):\n {2}runtime/);
  });
});

describe('runtime name table', () => {
  it('is the committed rendering of cupti_runtime_cbid.txt (and of the installed header, when there is one)', () => {
    const run = spawnSync('python3', [path.join(ROOT, 'scripts', 'gen-cupti-cbid.py'), '--check'], {
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/gen-cupti-cbid: \d{3} ids, table up to date/);
  });
});
