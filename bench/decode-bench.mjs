// Decoding throughput of agent-mode captures through the native addon, per vendor: for each, a synthetic capture
// shaped like a launch-bound run of that vendor (per launch: external correlation, the API/runtime call, the
// kernel, at the vendor's record sizes and layouts, with the strings and names frames its records point to),
// decoded to columns. Reports records/s against the 20 M/s target for every vendor, then, for CUPTI, the cost of
// also producing every event's metadata JSON and how long opening an agent-mode session of a million records
// takes next to opening the same events from a Kineto trace.
//   node bench/decode-bench.mjs [--vendor cupti|mspti|roctracer|rocprofiler|mcpti|mupti|topspti|all] [--records N] [--runs K]
import {
  existsSync,
  mkdtempSync,
  openSync,
  writeSync,
  closeSync,
  fsyncSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { loadBundle, root } from './lib.mjs';

const { values } = parseArgs({
  options: { records: { type: 'string' }, runs: { type: 'string' }, vendor: { type: 'string' } },
});
const TOTAL = Number(values.records ?? 10_000_000);
const RUNS = Number(values.runs ?? 3);
const TARGET = 20e6;
const addonPath = path.join(root, 'build', 'Release', 'flagprof.node');
if (!existsSync(addonPath)) {
  console.error(`bench: ${addonPath} is missing: run npm ci (or node scripts/build-addon.mjs)`);
  process.exit(2);
}
const addon = { exports: {} };
process.dlopen(addon, addonPath);
const { decodeCapture } = addon.exports;

// The tests' own writer of .fpc files and raw vendor records, at the vendors' published offsets.
const w = await loadBundle(
  'fpc-writer',
  `export {
     crc32c, frame, FRAME, namesFrame, externalRecord, apiRecord, kernelRecord, VENDOR, ROC_DOMAIN, ROC_OP,
     ROC_KIND, rocRecord, msptiApiRecord, msptiExternalRecord, msptiKernelRecord, msptiKernelStrings,
     rpsDispatchRecord, rpsExternalRecord, rpsHipApiRecord,
   } from './test/helpers/native';`,
);

const T0 = 1_790_000_000_000_000_000n;
// ROCtracer's HSA clock counts from boot: the header's pair maps it onto realtime.
const HSA0 = 5_000_000_000_000n;
const LAUNCH_NS = 4000;
const NAMES = [
  '_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_',
  '_ZN7cutlass6KernelI43cutlass_80_simt_sgemm_128x128_8x4_nn_align1EEvNT_6ParamsE',
  '_ZN2at6native20bitonicSortKVInPlaceIfEEvPT_i',
];
// NAMES[0] demangled, as Kineto names it.
const FILL_KERNEL =
  'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >' +
  '(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)';
// Ascend: an aclnn call and the AI Core / AI Vector kernel it runs (MSPTI points to both name and type).
const ASCEND = [
  ['aclnnMatmul', 'aclnnMatmul_MatMulCommon_MatMulV2', 'KERNEL_AICORE'],
  ['aclnnAdd', 'aclnnAdd_AddAiCore_Add', 'KERNEL_AIVEC'],
  ['aclnnSoftmax', 'aclnnSoftmax_SoftmaxV2AiCore_SoftmaxV2', 'KERNEL_AIVEC'],
];
const CUDA_LAUNCH_KERNEL = 211;
const HIP_LAUNCH_KERNEL = 44;
// An id in MetaX's own callback-id namespace, named only by the names frame the agent writes after the final flush.
const MC_LAUNCH_KERNEL = 41;
const MCPTI_KERNEL_SIZE = 200;

// What the template patcher shifts from one batch to the next: correlation ids, torch ids (one per 4 launches)
// and times.
const STEP = { correlation: 0, externalId: 1, time: 2 };
const field = (record, at, width, step) => ({ record, at, width, step });
/** CUPTI's three records of a launch (MCPTI's too, with its 200-byte Kernel8): the offsets the patcher shifts. */
const cuptiFields = [
  field(0, 8, 8, STEP.externalId),
  field(0, 16, 4, STEP.correlation),
  field(1, 8, 8, STEP.time),
  field(1, 16, 8, STEP.time),
  field(1, 32, 4, STEP.correlation),
  field(2, 16, 8, STEP.time),
  field(2, 24, 8, STEP.time),
  field(2, 92, 4, STEP.correlation),
];
const cuptiLaunch = (kernelSize, cbid) => (i, correlation, t) => [
  { bytes: w.externalRecord(correlation, BigInt(correlation >> 2), 3) },
  { bytes: w.apiRecord({ cbid, start: t, end: t + 1500n, correlation, pid: 1, tid: 1 }) },
  {
    bytes: w.kernelRecord({ start: t + 2000n, end: t + 3500n, correlation, size: kernelSize }),
    pointed: NAMES[i % NAMES.length],
  },
];

const VENDORS = {
  cupti: {
    id: w.VENDOR.cupti,
    label: 'CUPTI',
    apiVersion: 130001,
    vendorNs: T0,
    apiName: 'cudaLaunchKernel',
    kernelName: FILL_KERNEL,
    launch: cuptiLaunch(216, CUDA_LAUNCH_KERNEL),
    fields: cuptiFields,
    trailer: [],
  },
  mspti: {
    id: w.VENDOR.mspti,
    label: 'MSPTI',
    apiVersion: 260000,
    // MSPTI's clock is realtime already.
    vendorNs: T0,
    apiName: ASCEND[0][0],
    kernelName: ASCEND[0][1],
    launch: (i, correlation, t) => {
      const [api, kernel, type] = ASCEND[i % ASCEND.length];
      const id = BigInt(correlation);
      return [
        { bytes: w.msptiExternalRecord(id, BigInt(correlation >> 2)) },
        { bytes: w.msptiApiRecord({ start: t, end: t + 1500n, correlation: id }), pointed: api },
        {
          bytes: w.msptiKernelRecord({ start: t + 2000n, end: t + 3500n, correlation: id }),
          pointed: w.msptiKernelStrings(kernel, type),
        },
      ];
    },
    fields: [
      field(0, 8, 8, STEP.externalId),
      field(0, 16, 8, STEP.correlation),
      field(1, 4, 8, STEP.time),
      field(1, 12, 8, STEP.time),
      field(1, 28, 8, STEP.correlation),
      field(2, 4, 8, STEP.time),
      field(2, 12, 8, STEP.time),
      field(2, 28, 8, STEP.correlation),
    ],
    trailer: [],
  },
  roctracer: {
    id: w.VENDOR.roctracer,
    label: 'ROCtracer',
    apiVersion: 4,
    vendorNs: HSA0,
    apiName: 'hipLaunchKernel',
    kernelName: FILL_KERNEL,
    launch: (i, correlation, t) => {
      const id = BigInt(correlation);
      return [
        {
          bytes: w.rocRecord({
            domain: w.ROC_DOMAIN.extApi,
            op: 1,
            start: 0n,
            end: 0n,
            correlation: id,
            externalId: BigInt(correlation >> 2),
          }),
        },
        {
          bytes: w.rocRecord({
            domain: w.ROC_DOMAIN.hipApi,
            op: HIP_LAUNCH_KERNEL,
            start: t,
            end: t + 1500n,
            correlation: id,
          }),
        },
        {
          bytes: w.rocRecord({
            domain: w.ROC_DOMAIN.hipOps,
            op: w.ROC_OP.dispatch,
            kind: w.ROC_KIND.kernel,
            start: t + 2000n,
            end: t + 3500n,
            correlation: id,
            queue: 7n,
          }),
          pointed: NAMES[i % NAMES.length],
        },
      ];
    },
    fields: [
      field(0, 16, 8, STEP.correlation),
      field(0, 40, 8, STEP.externalId),
      field(1, 16, 8, STEP.correlation),
      field(1, 24, 8, STEP.time),
      field(1, 32, 8, STEP.time),
      field(2, 16, 8, STEP.correlation),
      field(2, 24, 8, STEP.time),
      field(2, 32, 8, STEP.time),
    ],
    // HIP API ids are named after the final flush (roctracer_op_string).
    trailer: [w.namesFrame(w.ROC_DOMAIN.hipApi, [[HIP_LAUNCH_KERNEL, 'hipLaunchKernel']])],
  },
  // rocprofiler-sdk: the agent's external record, the 64-byte HIP API record (with `ancestor`), the 184-byte
  // dispatch named by the string the agent attached; CLOCK_BOOTTIME mapped by the header's pair.
  rocprofiler: {
    id: 7,
    label: 'rocprofiler-sdk',
    apiVersion: 601,
    vendorNs: HSA0,
    apiName: 'hipExtModuleLaunchKernel',
    kernelName: FILL_KERNEL,
    launch: (i, correlation, t) => {
      const id = BigInt(correlation);
      return [
        { bytes: w.rpsExternalRecord(id, BigInt(correlation >> 2)) },
        { bytes: w.rpsHipApiRecord({ correlation: id, start: t, end: t + 1500n, ancestor: true }) },
        {
          bytes: w.rpsDispatchRecord({ correlation: id, start: t + 2000n, end: t + 3500n }),
          pointed: NAMES[i % NAMES.length],
        },
      ];
    },
    fields: [
      field(0, 16, 8, STEP.correlation),
      field(0, 24, 8, STEP.externalId),
      field(1, 16, 8, STEP.correlation),
      field(1, 40, 8, STEP.time),
      field(1, 48, 8, STEP.time),
      field(2, 16, 8, STEP.correlation),
      field(2, 40, 8, STEP.time),
      field(2, 48, 8, STEP.time),
    ],
    // HIP API operations are named after the final flush (the SDK's operation-name query).
    trailer: [w.namesFrame(5, [[113, 'hipExtModuleLaunchKernel']])],
  },
  mcpti: {
    id: 4,
    label: 'MCPTI',
    apiVersion: 18,
    vendorNs: T0,
    apiName: 'mcLaunchKernel',
    kernelName: FILL_KERNEL,
    launch: cuptiLaunch(MCPTI_KERNEL_SIZE, MC_LAUNCH_KERNEL),
    fields: cuptiFields,
    // Runtime callback domain (2): mcptiActivityGetApiName's names.
    trailer: [w.namesFrame(2, [[MC_LAUNCH_KERNEL, 'mcLaunchKernel']])],
  },
  // MUPTI: CUPTI's Kernel6 (168 B); names from muptiGetCallbackName, CLOCK_MONOTONIC mapped by the header's pair.
  mupti: {
    id: 5,
    label: 'MUPTI',
    apiVersion: 12,
    vendorNs: HSA0,
    apiName: 'musaLaunchKernel',
    kernelName: FILL_KERNEL,
    launch: cuptiLaunch(168, 31),
    fields: cuptiFields,
    trailer: [w.namesFrame(2, [[31, 'musaLaunchKernel']])],
  },
  // TOPSPTI: CUPTI's first kernel layout (144 B); the external records are the agent's, from its API-enter callback.
  topspti: {
    id: 6,
    label: 'TOPSPTI',
    apiVersion: 1,
    vendorNs: HSA0,
    apiName: 'topsLaunchKernel',
    kernelName: FILL_KERNEL,
    launch: cuptiLaunch(144, 7),
    fields: cuptiFields,
    trailer: [w.namesFrame(2, [[7, 'topsLaunchKernel']])],
  },
};

const selected = values.vendor ?? 'all';
if (selected !== 'all' && !(selected in VENDORS)) {
  console.error(`bench: --vendor ${selected}: expected ${Object.keys(VENDORS).join('|')}|all`);
  process.exit(2);
}
const vendors = selected === 'all' ? Object.keys(VENDORS) : [selected];

function header(vendor) {
  const h = Buffer.alloc(64);
  h.write('FLAGPCAP', 0, 'latin1');
  h.writeUInt16LE(1, 8);
  h.writeUInt16LE(64, 10);
  h.writeUInt32LE(vendor.id, 12);
  h.writeUInt32LE(vendor.apiVersion, 16);
  h.writeUInt32LE(1, 20);
  h.writeBigUInt64LE(vendor.vendorNs, 24);
  h.writeBigUInt64LE(T0, 32);
  h.writeUInt32LE(w.crc32c(h.subarray(0, 60)), 60);
  return h;
}

/**
 * One records frame of `launches` launches built record by record, correlation ids from 1, and where in it the
 * fields a later batch shifts lie: building every batch that way would take minutes at 10 M records. Laid out
 * here, as the format's records frame (fpc_format.h), rather than by the tests' recordsFrame, whose argument
 * spread overflows the stack at this many records.
 */
function template(vendor, launches) {
  const records = [];
  for (let i = 0; i < launches; i++)
    records.push(...vendor.launch(i, i + 1, vendor.vendorNs + BigInt(i * LAUNCH_NS)));
  const strings = [...new Set(records.filter((r) => r.pointed !== undefined).map((r) => r.pointed))];
  const index = new Map(strings.map((s, i) => [s, i]));
  const encoded = strings.map((s) => Buffer.from(s, 'utf8'));
  const size =
    4 +
    encoded.reduce((sum, b) => sum + 4 + b.length, 0) +
    4 +
    records.reduce((sum, r) => sum + 8 + r.bytes.length, 0);
  const payload = Buffer.alloc(size);
  let at = payload.writeUInt32LE(strings.length, 0);
  for (const b of encoded) {
    at = payload.writeUInt32LE(b.length, at);
    at += b.copy(payload, at);
  }
  at = payload.writeUInt32LE(records.length, at);
  // Offsets in the frame: its 8-byte head precedes the payload.
  const starts = records.map((r) => {
    at = payload.writeUInt32LE(r.bytes.length, at);
    at = payload.writeUInt32LE(r.pointed === undefined ? 0xffffffff : index.get(r.pointed), at);
    const start = 8 + at;
    at += r.bytes.copy(payload, at);
    return start;
  });
  const bytes = w.frame(w.FRAME.records, payload);
  const per = records.length / launches;
  const n = launches * vendor.fields.length;
  const offsets = new Int32Array(n);
  const widths = new Uint8Array(n);
  const steps = new Uint8Array(n);
  let k = 0;
  for (let i = 0; i < launches; i++)
    for (const f of vendor.fields) {
      offsets[k] = starts[i * per + f.record] + f.at;
      widths[k] = f.width;
      steps[k++] = f.step;
    }
  return { bytes, offsets, widths, steps };
}

/** The template shifted by `launches` launches (ids, torch ids and times), with its crc recomputed. */
function shifted(t, launches) {
  if (launches === 0) return t.bytes;
  const out = Buffer.from(t.bytes);
  const lo = [launches % 2 ** 32, (launches / 4) % 2 ** 32, (launches * LAUNCH_NS) % 2 ** 32];
  const hi = [0, 0, Math.floor((launches * LAUNCH_NS) / 2 ** 32)];
  for (let k = 0; k < t.offsets.length; k++) {
    const at = t.offsets[k];
    const step = t.steps[k];
    const low = t.bytes.readUInt32LE(at) + lo[step];
    out.writeUInt32LE(low >>> 0, at);
    if (t.widths[k] === 8)
      out.writeUInt32LE((t.bytes.readUInt32LE(at + 4) + hi[step] + (low >= 2 ** 32 ? 1 : 0)) >>> 0, at + 4);
  }
  out.writeUInt32LE(w.crc32c(out.subarray(0, out.length - 4)), out.length - 4);
  return out;
}

const BATCH = 50_000; // a multiple of 4: torch ids shift by whole numbers
function writeCapture(file, vendor, launches) {
  const templates = new Map();
  const fd = openSync(file, 'w');
  writeSync(fd, header(vendor));
  for (let done = 0; done < launches; done += BATCH) {
    const n = Math.min(BATCH, launches - done);
    if (!templates.has(n)) templates.set(n, template(vendor, n));
    writeSync(fd, shifted(templates.get(n), done));
  }
  for (const frame of vendor.trailer) writeSync(fd, frame);
  // On disk before timing, as a capture the agent wrote earlier is: writeback would otherwise compete with decoding.
  fsyncSync(fd);
  closeSync(fd);
}

/** Throws unless the decode saw every record and event of the capture, linked and named as written. */
function check(vendor, c, launches) {
  const runtime = c.kind.indexOf(3);
  const kernel = c.kind.indexOf(0);
  const kernelName = kernel < 0 ? undefined : c.names[c.name[kernel]];
  // The last launch's kernel, on the realtime clock: every batch's times shifted, carries included.
  const lastEnd = T0 + BigInt((launches - 1) * LAUNCH_NS + 3500);
  const problems = [
    c.vendor !== vendor.key && `vendor ${c.vendor}`,
    c.counts.records !== launches * 3 && `${c.counts.records} records`,
    c.length !== launches * 2 && `${c.length} events`,
    c.counts.kernel !== launches && `${c.counts.kernel} kernels`,
    c.counts.runtime !== launches && `${c.counts.runtime} runtime records`,
    c.counts.externalCorrelation !== launches && `${c.counts.externalCorrelation} external correlations`,
    c.counts.badFrames + c.counts.malformed !== 0 &&
      `${c.counts.badFrames} bad frames, ${c.counts.malformed} malformed`,
    (runtime < 0 || c.names[c.name[runtime]] !== vendor.apiName) &&
      `runtime call named ${c.names[c.name[runtime]]}`,
    (kernel < 0 || Number.isNaN(c.externalId[kernel])) && 'kernel without its torch id',
    // The first kernel's name as the decoder makes it (demangled; for MSPTI the name split from its type).
    kernelName !== vendor.kernelName && `kernel named ${JSON.stringify(kernelName)}`,
    c.correlation[c.length - 1] !== launches && `last correlation id ${c.correlation[c.length - 1]}`,
    c.baseNs + BigInt(c.end[c.length - 1]) !== lastEnd &&
      `last end ${c.baseNs + BigInt(c.end[c.length - 1])} ns`,
  ].filter(Boolean);
  if (problems.length)
    throw new Error(`${vendor.label}: decoded ${problems.join(', ')} (${launches * 3} records written)`);
}

// The columns a decode hands over: what it must fault in, whatever the decoder does.
const COLUMN_BYTES_PER_EVENT = 1 + 8 + 8 + 4 + 8 + 4 * 6;
async function release() {
  for (let i = 0; i < 2; i++) {
    globalThis.gc?.();
    await setImmediate();
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const verdict = (rate) => (rate >= TARGET ? 'met' : 'NOT met');

/** RUNS decodes of the capture, each checked, with the fresh-memory baseline of each. */
async function measure(vendor, file, launches) {
  const wall = [];
  const user = [];
  const system = [];
  const baseline = [];
  for (let run = 0; run < RUNS; run++) {
    // The previous run's columns are released first, as they are between two captures in the extension host
    // (their finalizers run on the event loop after a collection).
    await release();
    const t = performance.now();
    const cpu0 = process.cpuUsage();
    const c = decodeCapture(file);
    const s = (performance.now() - t) / 1000;
    const cpu = process.cpuUsage(cpu0);
    check(vendor, c, launches);
    const records = c.counts.records;
    // Baseline in the same run: faulting in and writing as many fresh bytes as the columns take. On a virtual
    // machine, memory the guest has not touched before is slow to fault in; this separates that from decoding.
    await release();
    const b0 = performance.now();
    new Uint8Array(c.length * COLUMN_BYTES_PER_EVENT).fill(1);
    const b = (performance.now() - b0) / 1000;
    wall.push(records / s);
    user.push(records / (cpu.user / 1e6));
    system.push(cpu.system / 1e6);
    baseline.push(b);
    console.log(
      `run ${run + 1}: ${records} records -> ${c.length} events in ${s.toFixed(3)} s = ${(records / s / 1e6).toFixed(1)} M records/s ` +
        `(user CPU ${(cpu.user / 1e6).toFixed(3)} s, system ${(cpu.system / 1e6).toFixed(3)} s; ` +
        `fresh-memory baseline ${((c.length * COLUMN_BYTES_PER_EVENT) / 2 ** 20).toFixed(0)} MiB in ${b.toFixed(3)} s)`,
    );
  }
  const result = { wall: median(wall), user: median(user) };
  console.log(
    `${vendor.label} decode (columns): median ${(result.wall / 1e6).toFixed(1)} M records/s wall, ` +
      `${(result.user / 1e6).toFixed(1)} M records/s per user-CPU second ` +
      `(target >= 20 M/s: ${verdict(result.wall)} wall, ${verdict(result.user)} user CPU); ` +
      `median system time ${median(system).toFixed(3)} s vs ${median(baseline).toFixed(3)} s to fault in the same bytes ` +
      `(load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} CPUs)`,
  );
  return result;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'flagprof-decode-bench-'));
const keep = Boolean(process.env.FLAGPROF_BENCH_KEEP);
const launches = Math.ceil(TOTAL / 3);
const summary = [];
for (const key of vendors) {
  const vendor = { key, ...VENDORS[key] };
  const file = path.join(dir, `synthetic-${key}.fpc`);
  const t = performance.now();
  writeCapture(file, vendor, launches);
  console.log(
    `\n${vendor.label}: synthetic capture: ${launches * 3} records, ${(statSync(file).size / 2 ** 20).toFixed(0)} MiB, ` +
      `written in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
  summary.push({ vendor, records: launches * 3, ...(await measure(vendor, file, launches)) });
  if (key === 'cupti') await cuptiSession(vendor);
  if (keep) console.log(`kept ${file}`);
  else rmSync(file, { force: true });
}

console.log(
  `\nvendor      records    M records/s wall   per user-CPU second   target >= 20 M/s (wall, user CPU)`,
);
for (const { vendor, records, wall, user } of summary)
  console.log(
    `${vendor.label.padEnd(10)} ${String(records).padStart(9)} ${(wall / 1e6).toFixed(1).padStart(18)} ` +
      `${(user / 1e6).toFixed(1).padStart(21)}   ${verdict(wall)}, ${verdict(user)}`,
  );
if (!keep) rmSync(dir, { recursive: true, force: true });

/**
 * Metadata JSON for every event, and opening an agent-mode session as the extension does, on the first million
 * CUPTI records.
 */
async function cuptiSession(vendor) {
  // Metadata JSON for every event costs more; measured on the first million records for scale.
  const small = path.join(dir, 'small.fpc');
  const smallLaunches = Math.ceil(Math.min(TOTAL, 1_000_000) / 3);
  writeCapture(small, vendor, smallLaunches);
  let t = performance.now();
  const withArgs = decodeCapture(small, { args: true });
  const sArgs = (performance.now() - t) / 1000;
  t = performance.now();
  check(vendor, decodeCapture(small), smallLaunches);
  const sPlain = (performance.now() - t) / 1000;
  console.log(
    `decode with metadata JSON: ${(withArgs.counts.records / sArgs / 1e6).toFixed(1)} M records/s ` +
      `(${(sArgs / sPlain).toFixed(1)}x the columns-only time on ${withArgs.counts.records} records)`,
  );
  // Opening an agent-mode session as the extension does (decode with metadata, place the events in the profile,
  // link and attribute), against the same events read from a Kineto JSON trace (what kineto mode opens).
  const lib = await loadBundle(
    'decode-open',
    `
      export { importTrace } from './extension/import/kineto';
      export { mergeCapture } from './extension/import/capture';
      export { analyze } from './extension/analysis/analyze';
    `,
  );
  const t0us = Number(T0 / 1000n);
  const cpuTrace = path.join(dir, 'cpu.trace.json.gz');
  writeFileSync(
    cpuTrace,
    gzipSync(
      JSON.stringify({
        traceEvents: [
          { ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 1, tid: 1, ts: t0us, dur: 1e6, args: {} },
        ],
      }),
    ),
  );
  const kinetoTrace = path.join(dir, 'same-events.pt.trace.json');
  const kfd = openSync(kinetoTrace, 'w');
  writeSync(kfd, '{"traceEvents": [\n');
  const kernelName = 'void at::native::bitonicSortKVInPlace<float>(float*, int)';
  for (let i = 0; i < smallLaunches; i++) {
    const corr = i + 1;
    const ts = (t0us + i * 4).toFixed(3);
    const k = (t0us + i * 4 + 2).toFixed(3);
    writeSync(
      kfd,
      `${i ? ',\n' : ''}{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ${ts}, "dur": 1.5, ` +
        `"args": {"External id": ${corr >> 2}, "cbid": 211, "correlation": ${corr}}},\n` +
        `{"ph": "X", "cat": "kernel", "name": "${kernelName}", "pid": 0, "tid": 7, "ts": ${k}, "dur": 1.5, ` +
        `"args": {"External id": ${corr >> 2}, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": ${corr}, ` +
        `"registers per thread": 32, "shared memory": 0, "blocks per SM": 0.00758, "warps per SM": 0.0303, ` +
        `"grid": [1, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 0}},\n` +
        `{"ph": "s", "id": ${corr}, "pid": 1, "tid": 1, "ts": ${ts}, "cat": "ac2g", "name": "ac2g"},\n` +
        `{"ph": "f", "id": ${corr}, "pid": 0, "tid": 7, "ts": ${k}, "cat": "ac2g", "name": "ac2g", "bp": "e"}`,
    );
  }
  writeSync(kfd, '\n]}\n');
  closeSync(kfd);
  await release();
  t = performance.now();
  const agentProfile = await lib.importTrace(cpuTrace);
  lib.mergeCapture(agentProfile, small);
  lib.analyze(agentProfile);
  const sAgent = (performance.now() - t) / 1000;
  await release();
  t = performance.now();
  const kinetoProfile = await lib.importTrace(kinetoTrace);
  lib.analyze(kinetoProfile);
  const sKineto = (performance.now() - t) / 1000;
  console.log(
    `open an agent-mode session (${smallLaunches * 2} events, metadata included): ${sAgent.toFixed(2)} s; ` +
      `the same events from a Kineto trace (${(statSync(kinetoTrace).size / 2 ** 20).toFixed(0)} MiB): ${sKineto.toFixed(2)} s ` +
      `(${(sAgent / sKineto).toFixed(2)}x)`,
  );
  for (const f of [small, cpuTrace, kinetoTrace]) if (!keep) rmSync(f, { force: true });
}
