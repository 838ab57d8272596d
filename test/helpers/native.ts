/**
 * Shared by the native tests: the built addon/agent, the fake CUPTI library (built here from test/fake-cupti with
 * the real CUPTI headers when installed), and an independent writer of .fpc captures and raw CUPTI records.
 * The writer follows the vendor's published offsets, not the tracer's mirror, so the two check each other.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { PYTHON, ROOT } from './paths';

export { PYTHON, ROOT };
export const ADDON = path.join(ROOT, 'build', 'Release', 'flagprof.node');
export const AGENT = path.join(ROOT, 'build', 'Release', 'libflagprof_agent.so');
export const FAKE_CUPTI = path.join(ROOT, 'out', 'native', 'libcupti_fake.so');
export const FAKE_MSPTI = path.join(ROOT, 'out', 'native', 'libmspti_fake.so');
export const FAKE_ROCTRACER = path.join(ROOT, 'out', 'native', 'libroctracer64_fake.so');
export const FAKE_MCPTI = path.join(ROOT, 'out', 'native', 'libmcpti_fake.so');
export const FAKE_MUPTI = path.join(ROOT, 'out', 'native', 'libmupti_fake.so');
export const FAKE_TOPSPTI = path.join(ROOT, 'out', 'native', 'libtopspti_fake.so');
export const FAKE_ROCPROFILER = path.join(ROOT, 'out', 'native', 'librocprofiler-sdk_fake.so');

/** Builds the addon and agent when `npm ci` has not (node-gyp, no downloads). */
export function ensureNativeBuilt(): void {
  if (existsSync(ADDON) && existsSync(AGENT)) return;
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build-addon.mjs')], {
    cwd: ROOT,
    stdio: 'pipe',
  });
}

export function cuptiIncludeDir(): string {
  return execFileSync(process.execPath, [path.join(ROOT, 'native', 'vendors', 'cupti', 'find-headers.mjs')], {
    encoding: 'utf8',
  });
}

/** The buffer delivery and the string ownership the fake vendor libraries share. */
const FAKE_DELIVERY = path.join(ROOT, 'test', 'fake-vendor', 'delivery.h');
const FAKE_NAMES = path.join(ROOT, 'test', 'fake-vendor', 'names.h');

/** Compiles a fake vendor library when missing or older than any file it is built from. */
function buildFake(source: string, output: string, dependencies: string[], include?: string): string {
  const built = existsSync(output) ? statSync(output).mtimeMs : 0;
  if ([source, ...dependencies].every((file) => built >= statSync(file).mtimeMs)) return output;
  mkdirSync(path.dirname(output), { recursive: true });
  // Built beside it and renamed into place: test files run in parallel workers, and one may load the library while
  // another rebuilds it; a rename is atomic, so a loader sees the old file or the new one, never half of one.
  const building = `${output}.${process.pid}.tmp`;
  execFileSync(
    'cc',
    [
      '-std=gnu11',
      '-O2',
      '-Wall',
      '-fPIC',
      '-shared',
      ...(include ? [`-I${include}`] : []),
      `-I${path.join(ROOT, 'native')}`,
      source,
      '-o',
      building,
      '-lpthread',
    ],
    { stdio: 'pipe' },
  );
  renameSync(building, output);
  return output;
}

/** Compiles the fake CUPTI library (against the real CUPTI headers where installed) when missing or stale. */
export function ensureFakeCupti(): string {
  return buildFake(
    path.join(ROOT, 'test', 'fake-cupti', 'fake_cupti.c'),
    FAKE_CUPTI,
    [FAKE_DELIVERY, path.join(ROOT, 'native', 'vendors', 'cupti', 'mirror.h')],
    cuptiIncludeDir(),
  );
}

/** Compiles the fake MSPTI library (from the tracer's mirror: no MSPTI header is installed) when missing or stale. */
export function ensureFakeMspti(): string {
  return buildFake(path.join(ROOT, 'test', 'fake-mspti', 'fake_mspti.c'), FAKE_MSPTI, [
    FAKE_DELIVERY,
    FAKE_NAMES,
    path.join(ROOT, 'native', 'vendors', 'mspti', 'mirror.h'),
  ]);
}

/** Compiles the fake ROCtracer library (from the tracer's mirror: no ROCtracer header is installed) when missing or
 * stale. */
export function ensureFakeRoctracer(): string {
  return buildFake(path.join(ROOT, 'test', 'fake-roctracer', 'fake_roctracer.c'), FAKE_ROCTRACER, [
    FAKE_DELIVERY,
    FAKE_NAMES,
    path.join(ROOT, 'native', 'vendors', 'roctracer', 'mirror.h'),
  ]);
}

/** Compiles the fake MetaX MCPTI library (from the tracer's mirror: MCPTI has no public header) when missing or
 * stale. */
/** Compiles the fake rocprofiler-sdk library when missing or stale. */
export function ensureFakeRocprofiler(): string {
  return buildFake(path.join(ROOT, 'test', 'fake-rocprofiler', 'fake_rocprofiler.c'), FAKE_ROCPROFILER, [
    FAKE_DELIVERY,
    FAKE_NAMES,
    path.join(ROOT, 'native', 'vendors', 'rocprofiler', 'mirror.h'),
  ]);
}

/** A fake CUPTI clone (test/fake-<key>/fake_<key>.c on the shared body, test/fake-vendor/cupti_clone.h). */
function ensureFakeClone(key: 'mcpti' | 'mupti' | 'topspti', output: string): string {
  return buildFake(path.join(ROOT, 'test', `fake-${key}`, `fake_${key}.c`), output, [
    FAKE_DELIVERY,
    FAKE_NAMES,
    path.join(ROOT, 'test', 'fake-vendor', 'cupti_clone.h'),
    path.join(ROOT, 'native', 'vendors', key, 'mirror.h'),
    path.join(ROOT, 'native', 'vendors', 'cupti', 'mirror.h'),
  ]);
}

export function ensureFakeMcpti(): string {
  return ensureFakeClone('mcpti', FAKE_MCPTI);
}

export function ensureFakeMupti(): string {
  return ensureFakeClone('mupti', FAKE_MUPTI);
}

export function ensureFakeTopspti(): string {
  return ensureFakeClone('topspti', FAKE_TOPSPTI);
}

// ---- .fpc writing ----

/** CRC-32C (Castagnoli), as the capture format checksums its header and frames. */
const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[i] = c >>> 0;
  }
  return table;
})();

export function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = CRC32C_TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export const FRAME = {
  records: 1,
  names: 2,
  calibration: 3,
  session: 4,
  diagnostic: 5,
  dropped: 6,
  library: 7,
  end: 8,
};
export const KIND = {
  memcpy: 1,
  memset: 2,
  kernel: 3,
  driver: 4,
  runtime: 5,
  device: 8,
  concurrentKernel: 10,
  externalCorrelation: 39,
};

export const VENDOR = { cupti: 1, mspti: 2, roctracer: 3, mcpti: 4, mupti: 5, topspti: 6, rocprofiler: 7 };

export function fpcHeader(
  options: {
    version?: number;
    vendor?: number;
    apiVersion?: number;
    vendorNs?: bigint;
    realtimeNs?: bigint;
  } = {},
): Buffer {
  const h = Buffer.alloc(64);
  h.write('FLAGPCAP', 0, 'latin1');
  h.writeUInt16LE(options.version ?? 1, 8);
  h.writeUInt16LE(64, 10);
  h.writeUInt32LE(options.vendor ?? VENDOR.cupti, 12);
  h.writeUInt32LE(options.apiVersion ?? 130001, 16);
  h.writeUInt32LE(4242, 20);
  h.writeBigUInt64LE(options.vendorNs ?? 0n, 24);
  h.writeBigUInt64LE(options.realtimeNs ?? 0n, 32);
  h.writeUInt32LE(crc32c(h.subarray(0, 60)), 60);
  return h;
}

export function frame(type: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32LE(type, 0);
  head.writeUInt32LE(payload.length, 4);
  const body = Buffer.concat([head, payload]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32LE(crc32c(body), 0);
  return Buffer.concat([body, crc]);
}

export interface RawRecord {
  bytes: Buffer;
  /** The string the record pointed to (kernel name). */
  pointed?: string;
}

export function recordsFrame(records: RawRecord[]): Buffer {
  const strings: string[] = [];
  const parts: Buffer[] = [];
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0, 0);
    return b;
  };
  const body: Buffer[] = [];
  for (const r of records) {
    let index = 0xffffffff;
    if (r.pointed !== undefined) {
      index = strings.indexOf(r.pointed);
      if (index < 0) index = strings.push(r.pointed) - 1;
    }
    body.push(u32(r.bytes.length), u32(index), r.bytes);
  }
  parts.push(u32(strings.length));
  for (const s of strings) {
    const b = Buffer.from(s, 'utf8');
    parts.push(u32(b.length), b);
  }
  parts.push(u32(records.length), ...body);
  return frame(FRAME.records, Buffer.concat(parts));
}

export function sessionFrame(event: 1 | 2, ns: bigint): Buffer {
  const b = Buffer.alloc(16);
  b.writeUInt32LE(event, 0);
  b.writeBigUInt64LE(ns, 8);
  return frame(FRAME.session, b);
}

export function calibrationFrame(phase: number, vendorNs: bigint, realtimeNs: bigint): Buffer {
  const b = Buffer.alloc(24);
  b.writeUInt32LE(phase, 0);
  b.writeBigUInt64LE(vendorNs, 8);
  b.writeBigUInt64LE(realtimeNs, 16);
  return frame(FRAME.calibration, b);
}

export function namesFrame(domain: number, names: [number, string][]): Buffer {
  const parts: Buffer[] = [];
  const head = Buffer.alloc(8);
  head.writeUInt32LE(domain, 0);
  head.writeUInt32LE(names.length, 4);
  parts.push(head);
  for (const [id, name] of names) {
    const b = Buffer.from(name, 'utf8');
    const e = Buffer.alloc(8);
    e.writeUInt32LE(id, 0);
    e.writeUInt32LE(b.length, 4);
    parts.push(e, b);
  }
  return frame(FRAME.names, Buffer.concat(parts));
}

export function droppedFrame(count: bigint): Buffer {
  const b = Buffer.alloc(16);
  b.writeBigUInt64LE(count, 8);
  return frame(FRAME.dropped, b);
}

export function endFrame(ns: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(ns, 0);
  return frame(FRAME.end, b);
}

// Raw CUPTI records at the offsets of the vendor's cupti_activity.h (CUDA 13 newest versions unless sized).
export interface KernelFields {
  start: bigint;
  end: bigint;
  correlation: number;
  grid?: [number, number, number];
  block?: [number, number, number];
  registers?: number;
  staticShared?: number;
  dynamicShared?: number;
  device?: number;
  context?: number;
  stream?: number;
  queued?: bigint;
  size?: number;
  kind?: number;
}

export function kernelRecord(f: KernelFields): Buffer {
  const b = Buffer.alloc(Math.max(f.size ?? 216, 216));
  b.writeUInt32LE(f.kind ?? KIND.concurrentKernel, 0);
  b.writeUInt16LE(f.registers ?? 32, 6);
  b.writeBigUInt64LE(f.start, 16);
  b.writeBigUInt64LE(f.end, 24);
  b.writeUInt32LE(f.device ?? 0, 40);
  b.writeUInt32LE(f.context ?? 1, 44);
  b.writeUInt32LE(f.stream ?? 7, 48);
  const [gx, gy, gz] = f.grid ?? [1, 1, 1];
  const [bx, by, bz] = f.block ?? [128, 1, 1];
  [gx, gy, gz, bx, by, bz].forEach((v, i) => b.writeInt32LE(v, 52 + 4 * i));
  b.writeInt32LE(f.staticShared ?? 0, 76);
  b.writeInt32LE(f.dynamicShared ?? 0, 80);
  b.writeUInt32LE(f.correlation, 92);
  b.writeBigUInt64LE(0xdeadbeefn, 104); // the name pointer: meaningless once copied
  b.writeBigUInt64LE(f.queued ?? 0n, 120);
  return b.subarray(0, f.size ?? 216);
}

export function memcpyRecord(f: {
  start: bigint;
  end: bigint;
  correlation: number;
  bytes: bigint;
  copyKind?: number;
  src?: number;
  dst?: number;
  size?: number;
}): Buffer {
  const b = Buffer.alloc(f.size ?? 96);
  b.writeUInt32LE(KIND.memcpy, 0);
  b.writeUInt8(f.copyKind ?? 1, 4);
  b.writeUInt8(f.src ?? 1, 5);
  b.writeUInt8(f.dst ?? 3, 6);
  b.writeBigUInt64LE(f.bytes, 8);
  b.writeBigUInt64LE(f.start, 16);
  b.writeBigUInt64LE(f.end, 24);
  b.writeUInt32LE(0, 32);
  b.writeUInt32LE(1, 36);
  b.writeUInt32LE(7, 40);
  b.writeUInt32LE(f.correlation, 44);
  return b;
}

export function memsetRecord(f: {
  start: bigint;
  end: bigint;
  correlation: number;
  bytes: bigint;
  value?: number;
  memoryKind?: number;
  size?: number;
}): Buffer {
  const b = Buffer.alloc(f.size ?? 88);
  b.writeUInt32LE(KIND.memset, 0);
  b.writeUInt32LE(f.value ?? 0, 4);
  b.writeBigUInt64LE(f.bytes, 8);
  b.writeBigUInt64LE(f.start, 16);
  b.writeBigUInt64LE(f.end, 24);
  b.writeUInt32LE(0, 32);
  b.writeUInt32LE(1, 36);
  b.writeUInt32LE(7, 40);
  b.writeUInt32LE(f.correlation, 44);
  b.writeUInt16LE(f.memoryKind ?? 3, 50);
  return b;
}

export function apiRecord(f: {
  kind?: number;
  cbid: number;
  start: bigint;
  end: bigint;
  correlation: number;
  pid?: number;
  tid?: number;
}): Buffer {
  const b = Buffer.alloc(40);
  b.writeUInt32LE(f.kind ?? KIND.runtime, 0);
  b.writeUInt32LE(f.cbid, 4);
  b.writeBigUInt64LE(f.start, 8);
  b.writeBigUInt64LE(f.end, 16);
  b.writeUInt32LE(f.pid ?? 4242, 24);
  b.writeUInt32LE(f.tid ?? 4243, 28);
  b.writeUInt32LE(f.correlation, 32);
  return b;
}

export function externalRecord(correlation: number, externalId: bigint, externalKind = 3): Buffer {
  const b = Buffer.alloc(24);
  b.writeUInt32LE(KIND.externalCorrelation, 0);
  b.writeUInt32LE(externalKind, 4);
  b.writeBigUInt64LE(externalId, 8);
  b.writeUInt32LE(correlation, 16);
  return b;
}

/** An H100-like device record (CUpti_ActivityDevice5 offsets). */
export function deviceRecord(id = 0): Buffer {
  const b = Buffer.alloc(184);
  b.writeUInt32LE(KIND.device, 0);
  b.writeUInt32LE(32, 32); // threads per warp
  b.writeUInt32LE(132, 44); // multiprocessors
  b.writeUInt32LE(64, 52); // max warps per SM
  b.writeUInt32LE(32, 56); // max blocks per SM
  b.writeUInt32LE(233472, 60); // shared memory per SM
  b.writeUInt32LE(65536, 64); // registers per SM
  b.writeUInt32LE(65536, 68); // registers per block
  b.writeUInt32LE(1024, 76); // threads per block
  b.writeUInt32LE(9, 104);
  b.writeUInt32LE(id, 112);
  return b;
}

// Raw MSPTI records at the offsets of the public mspti_activity.h (packed, 8-aligned; 64-bit correlation ids).
export const MSPTI_KIND = { kernel: 2, api: 3, memset: 6, memcpy: 7, externalCorrelation: 8 };

/** How the agent stores an MSPTI kernel's two strings in one string-table entry: name, NUL, type. */
export function msptiKernelStrings(name: string, type: string): string {
  return `${name}\u0000${type}`;
}

export function msptiKernelRecord(f: {
  start: bigint;
  end: bigint;
  correlation: bigint;
  device?: number;
  stream?: number;
}): Buffer {
  const b = Buffer.alloc(56);
  b.writeUInt32LE(MSPTI_KIND.kernel, 0);
  b.writeBigUInt64LE(f.start, 4);
  b.writeBigUInt64LE(f.end, 12);
  b.writeUInt32LE(f.device ?? 0, 20);
  b.writeUInt32LE(f.stream ?? 3, 24);
  b.writeBigUInt64LE(f.correlation, 28);
  b.writeBigUInt64LE(0xdeadbeefn, 36); // type and name pointers: meaningless once copied
  b.writeBigUInt64LE(0xfeedfacen, 44);
  return b;
}

export function msptiApiRecord(f: {
  start: bigint;
  end: bigint;
  correlation: bigint;
  pid?: number;
  tid?: number;
}): Buffer {
  const b = Buffer.alloc(48);
  b.writeUInt32LE(MSPTI_KIND.api, 0);
  b.writeBigUInt64LE(f.start, 4);
  b.writeBigUInt64LE(f.end, 12);
  b.writeUInt32LE(f.pid ?? 4242, 20);
  b.writeUInt32LE(f.tid ?? 4243, 24);
  b.writeBigUInt64LE(f.correlation, 28);
  b.writeBigUInt64LE(0xdeadbeefn, 36);
  return b;
}

/** Memcpy (copyKind 2 HtoD, 3 DtoH, 4 DtoD) and memset share one layout: the word at 4 is the kind or the value. */
export function msptiMemoryRecord(f: {
  kind: 'memcpy' | 'memset';
  start: bigint;
  end: bigint;
  correlation: bigint;
  bytes: bigint;
  copyKindOrValue?: number;
  isAsync?: boolean;
  device?: number;
  stream?: number;
}): Buffer {
  const b = Buffer.alloc(56);
  b.writeUInt32LE(f.kind === 'memcpy' ? MSPTI_KIND.memcpy : MSPTI_KIND.memset, 0);
  b.writeUInt32LE(f.copyKindOrValue ?? (f.kind === 'memcpy' ? 2 : 0), 4);
  b.writeBigUInt64LE(f.bytes, 8);
  b.writeBigUInt64LE(f.start, 16);
  b.writeBigUInt64LE(f.end, 24);
  b.writeUInt32LE(f.device ?? 0, 32);
  b.writeUInt32LE(f.stream ?? 3, 36);
  b.writeBigUInt64LE(f.correlation, 40);
  b.writeUInt8(f.isAsync === false ? 0 : 1, 48);
  return b;
}

export function msptiExternalRecord(correlation: bigint, externalId: bigint, externalKind = 2): Buffer {
  const b = Buffer.alloc(24);
  b.writeUInt32LE(MSPTI_KIND.externalCorrelation, 0);
  b.writeUInt32LE(externalKind, 4);
  b.writeBigUInt64LE(externalId, 8);
  b.writeBigUInt64LE(correlation, 16);
  return b;
}

// Raw ROCtracer records at the offsets of the public ext/prof_protocol.h: one 64-byte activity_record_t for
// every domain (64-bit correlation ids).
export const ROC_DOMAIN = { hipOps: 2, hipApi: 3, extApi: 5 };
/** HIP_OPS op numbers, and the command types a copy's kind holds (OpenCL numbers, as HIP's runtime uses them). */
export const ROC_OP = { dispatch: 0, copy: 1, barrier: 2 };
export const ROC_KIND = { kernel: 0x11f0, dtoh: 0x11f3, htod: 0x11f4, dtod: 0x11f5, fill: 0x1207 };

export function rocRecord(f: {
  domain: number;
  op: number;
  kind?: number;
  start: bigint;
  end: bigint;
  correlation: bigint;
  device?: number;
  queue?: bigint;
  pid?: number;
  tid?: number;
  externalId?: bigint;
  bytes?: bigint;
}): Buffer {
  const b = Buffer.alloc(64);
  b.writeUInt32LE(f.domain, 0);
  b.writeUInt32LE(f.kind ?? 0, 4);
  b.writeUInt32LE(f.op, 8);
  b.writeBigUInt64LE(f.correlation, 16);
  b.writeBigUInt64LE(f.start, 24);
  b.writeBigUInt64LE(f.end, 32);
  if (f.domain === ROC_DOMAIN.hipOps) {
    b.writeInt32LE(f.device ?? 0, 40);
    b.writeBigUInt64LE(f.queue ?? 0n, 48);
  } else if (f.domain === ROC_DOMAIN.hipApi) {
    b.writeUInt32LE(f.pid ?? 4242, 40);
    b.writeUInt32LE(f.tid ?? 4243, 44);
  } else if (f.domain === ROC_DOMAIN.extApi) {
    b.writeBigUInt64LE(f.externalId ?? 0n, 40);
  }
  // A kernel's name pointer (meaningless once copied) or a copy's byte count.
  b.writeBigUInt64LE(f.bytes ?? 0xdeadbeefn, 56);
  return b;
}

// Raw rocprofiler-sdk records at the offsets of the public buffer_tracing.h / fwd.h (the agent's external record:
// its mirror.h), for the decode tests and bench:decode.
export const RPS_KIND = { hipApi: 5, memoryCopy: 10, kernelDispatch: 11, external: 0x464c4558 };
const HIP_LAUNCH = 113;

function rpsHeader(size: number, kind: number, operation: number): Buffer {
  const b = Buffer.alloc(size);
  b.writeBigUInt64LE(BigInt(size), 0);
  b.writeUInt32LE(kind, 8);
  b.writeUInt32LE(operation, 12);
  return b;
}

/** rocprofiler_buffer_tracing_kernel_dispatch_record_t (184 bytes), external id in its correlation. */
export function rpsDispatchRecord(f: {
  correlation: bigint;
  external?: bigint;
  start: bigint;
  end: bigint;
  kernelId?: bigint;
}) {
  const b = rpsHeader(184, RPS_KIND.kernelDispatch, 1);
  b.writeBigUInt64LE(f.correlation, 16);
  b.writeBigUInt64LE(f.external ?? 0n, 24);
  b.writeBigUInt64LE(4243n, 32); // thread_id
  b.writeBigUInt64LE(f.start, 40);
  b.writeBigUInt64LE(f.end, 48);
  b.writeBigUInt64LE(128n, 56); // dispatch_info.size
  b.writeBigUInt64LE(7n, 56 + 8); // agent_id
  b.writeBigUInt64LE(3n, 56 + 16); // queue_id
  b.writeBigUInt64LE(f.kernelId ?? 42n, 56 + 24);
  [256, 1, 1, 65536, 1, 1].forEach((v, i) => b.writeUInt32LE(v, 56 + 48 + 4 * i)); // workgroup, grid
  return b;
}

/** rocprofiler_buffer_tracing_hip_api_record_t: 64 bytes with `ancestor`, 56 before it. */
export function rpsHipApiRecord(f: {
  correlation: bigint;
  external?: bigint;
  start: bigint;
  end: bigint;
  ancestor: boolean;
  op?: number;
}) {
  const b = rpsHeader(f.ancestor ? 64 : 56, RPS_KIND.hipApi, f.op ?? HIP_LAUNCH);
  b.writeBigUInt64LE(f.correlation, 16);
  b.writeBigUInt64LE(f.external ?? 0n, 24);
  const at = f.ancestor ? 40 : 32;
  b.writeBigUInt64LE(f.start, at);
  b.writeBigUInt64LE(f.end, at + 8);
  b.writeBigUInt64LE(4243n, at + 16);
  return b;
}

/** rocprofiler_buffer_tracing_memory_copy_record_t (80 bytes); operation 3 = DEVICE_TO_HOST. */
export function rpsMemoryCopyRecord(f: { correlation: bigint; start: bigint; end: bigint; bytes: bigint }) {
  const b = rpsHeader(80, RPS_KIND.memoryCopy, 3);
  b.writeBigUInt64LE(f.correlation, 16);
  b.writeBigUInt64LE(4243n, 32);
  b.writeBigUInt64LE(f.start, 40);
  b.writeBigUInt64LE(f.end, 48);
  b.writeBigUInt64LE(f.bytes, 72);
  return b;
}

/** The agent's record: records of correlation `internal` carried torch id `external`. */
export function rpsExternalRecord(internal: bigint, id: bigint) {
  const b = rpsHeader(32, RPS_KIND.external, 0);
  b.writeBigUInt64LE(internal, 16);
  b.writeBigUInt64LE(id, 24);
  return b;
}

/** A run of the fake CUPTI workload (test/fake-cupti/workload.py) into a fresh session folder. */
export interface WorkloadRun {
  dir: string;
  stderr: string;
  status: number | null;
}

export function runCuptiWorkload(env: Record<string, string> = {}, args: string[] = []): WorkloadRun {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flagprof-agentmode-'));
  const run = spawnSync(PYTHON, [path.join(ROOT, 'test', 'fake-cupti', 'workload.py'), dir, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      ...process.env,
      PYTHONPATH: path.join(ROOT, 'native', 'agent', 'python'),
      FLAGOS_TRACER_LIBRARY: ensureFakeCupti(),
      ...env,
    },
  });
  return { dir, stderr: run.stderr, status: run.status };
}
