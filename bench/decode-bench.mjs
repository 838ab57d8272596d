// Decoding throughput of agent-mode captures through the native addon: a synthetic capture of 10 million CUPTI
// records (per launch: external correlation, cudaLaunchKernel runtime record, Kernel10 record) decoded to columns.
// Reports records/s against the 20 M/s target, the cost of also producing every event's metadata JSON, and how
// long opening an agent-mode session of a million records takes next to opening the same events from a Kineto trace.
//   node bench/decode-bench.mjs [--records N] [--runs K]
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

const { values } = parseArgs({ options: { records: { type: 'string' }, runs: { type: 'string' } } });
const TOTAL = Number(values.records ?? 10_000_000);
const RUNS = Number(values.runs ?? 3);
const addonPath = path.join(root, 'build', 'Release', 'flagprof.node');
if (!existsSync(addonPath)) {
  console.error(`bench: ${addonPath} is missing: run npm ci (or node scripts/build-addon.mjs)`);
  process.exit(2);
}
const addon = { exports: {} };
process.dlopen(addon, addonPath);
const { decodeCapture } = addon.exports;

const T0 = 1_790_000_000_000_000_000n;
const NAMES = [
  '_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_',
  '_ZN7cutlass6KernelI43cutlass_80_simt_sgemm_128x128_8x4_nn_align1EEvNT_6ParamsE',
  '_ZN2at6native20bitonicSortKVInPlaceIfEEvPT_i',
];

// CRC-32C, as the capture format checksums its header and frames: the tests' own writer of .fpc files.
const { crc32c } = await loadBundle('fpc-crc', "export { crc32c } from './test/helpers/native';");

function frame(type, payload) {
  const out = Buffer.allocUnsafe(payload.length + 12);
  out.writeUInt32LE(type, 0);
  out.writeUInt32LE(payload.length, 4);
  payload.copy(out, 8);
  out.writeUInt32LE(crc32c(out.subarray(0, 8 + payload.length)), 8 + payload.length);
  return out;
}

function header() {
  const h = Buffer.alloc(64);
  h.write('FLAGPCAP', 0, 'latin1');
  h.writeUInt16LE(1, 8);
  h.writeUInt16LE(64, 10);
  h.writeUInt32LE(1, 12);
  h.writeUInt32LE(130001, 16);
  h.writeUInt32LE(1, 20);
  h.writeBigUInt64LE(T0, 24);
  h.writeBigUInt64LE(T0, 32);
  h.writeUInt32LE(crc32c(h.subarray(0, 60)), 60);
  return h;
}

/** One frame of `launches` launches (3 records each), correlation ids from `firstCorrelation`. */
function batch(launches, firstCorrelation, firstNs) {
  const strings = Buffer.concat(
    NAMES.flatMap((n) => {
      const b = Buffer.from(n);
      const len = Buffer.alloc(4);
      len.writeUInt32LE(b.length);
      return [len, b];
    }),
  );
  const per = 8 + 24 + 8 + 40 + 8 + 216;
  const body = Buffer.alloc(4 + strings.length + 4 + launches * per);
  let at = 0;
  body.writeUInt32LE(NAMES.length, at);
  at += 4;
  strings.copy(body, at);
  at += strings.length;
  body.writeUInt32LE(launches * 3, at);
  at += 4;
  for (let i = 0; i < launches; i++) {
    const corr = firstCorrelation + i;
    const t = firstNs + BigInt(i) * 4000n;
    // external correlation (kind 39, CUSTOM0)
    body.writeUInt32LE(24, at);
    body.writeUInt32LE(0xffffffff, at + 4);
    body.writeUInt32LE(39, at + 8);
    body.writeUInt32LE(3, at + 12);
    body.writeBigUInt64LE(BigInt(corr >> 2), at + 16);
    body.writeUInt32LE(corr, at + 24);
    at += 32;
    // runtime API record (kind 5, cudaLaunchKernel)
    body.writeUInt32LE(40, at);
    body.writeUInt32LE(0xffffffff, at + 4);
    body.writeUInt32LE(5, at + 8);
    body.writeUInt32LE(211, at + 12);
    body.writeBigUInt64LE(t, at + 16);
    body.writeBigUInt64LE(t + 1500n, at + 24);
    body.writeUInt32LE(1, at + 32);
    body.writeUInt32LE(1, at + 36);
    body.writeUInt32LE(corr, at + 40);
    at += 48;
    // Kernel10 (kind 10)
    body.writeUInt32LE(216, at);
    body.writeUInt32LE(i % NAMES.length, at + 4);
    const k = at + 8;
    body.writeUInt32LE(10, k);
    body.writeUInt16LE(32, k + 6);
    body.writeBigUInt64LE(t + 2000n, k + 16);
    body.writeBigUInt64LE(t + 3500n, k + 24);
    body.writeUInt32LE(7, k + 48);
    body.writeInt32LE(128, k + 52);
    body.writeInt32LE(1, k + 56);
    body.writeInt32LE(1, k + 60);
    body.writeInt32LE(256, k + 64);
    body.writeInt32LE(1, k + 68);
    body.writeInt32LE(1, k + 72);
    body.writeUInt32LE(corr, k + 92);
    at += 8 + 216;
  }
  return frame(1, body);
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'flagprof-decode-bench-'));
const file = path.join(dir, 'synthetic.fpc');
const launches = Math.ceil(TOTAL / 3);
const BATCH = 50_000;
let t = performance.now();
const fd = openSync(file, 'w');
writeSync(fd, header());
for (let done = 0; done < launches; done += BATCH) {
  const n = Math.min(BATCH, launches - done);
  writeSync(fd, batch(n, done + 1, T0 + BigInt(done) * 4000n));
}
// On disk before timing, as a capture the agent wrote earlier is: writeback would otherwise compete with decoding.
fsyncSync(fd);
closeSync(fd);
const size = statSync(file).size;
console.log(
  `synthetic capture: ${launches * 3} records, ${(size / 2 ** 20).toFixed(0)} MiB, written in ${((performance.now() - t) / 1000).toFixed(1)} s`,
);

// The columns a decode hands over: what it must fault in, whatever the decoder does.
const COLUMN_BYTES_PER_EVENT = 1 + 8 + 8 + 4 + 8 + 4 * 6;
async function release() {
  for (let i = 0; i < 2; i++) {
    globalThis.gc?.();
    await setImmediate();
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const wall = [];
const user = [];
const system = [];
const baseline = [];
for (let run = 0; run < RUNS; run++) {
  // The previous run's columns are released first, as they are between two captures in the extension host
  // (their finalizers run on the event loop after a collection).
  await release();
  t = performance.now();
  const cpu0 = process.cpuUsage();
  const c = decodeCapture(file);
  const s = (performance.now() - t) / 1000;
  const cpu = process.cpuUsage(cpu0);
  if (c.counts.records !== launches * 3 || c.length !== launches * 2)
    throw new Error(`decoded ${c.counts.records} records, ${c.length} events`);
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
console.log(
  `decode (columns): median ${(median(wall) / 1e6).toFixed(1)} M records/s wall, ` +
    `${(median(user) / 1e6).toFixed(1)} M records/s per user-CPU second ` +
    `(target >= 20 M/s: ${median(wall) >= 20e6 ? 'met' : 'NOT met'} wall, ${median(user) >= 20e6 ? 'met' : 'NOT met'} user CPU); ` +
    `median system time ${median(system).toFixed(3)} s vs ${median(baseline).toFixed(3)} s to fault in the same bytes ` +
    `(load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} CPUs)`,
);

// Metadata JSON for every event costs more; measured on the first million records for scale.
const small = path.join(dir, 'small.fpc');
const fd2 = openSync(small, 'w');
writeSync(fd2, header());
const smallLaunches = Math.ceil(Math.min(TOTAL, 1_000_000) / 3);
for (let done = 0; done < smallLaunches; done += BATCH)
  writeSync(fd2, batch(Math.min(BATCH, smallLaunches - done), done + 1, T0));
closeSync(fd2);
t = performance.now();
const withArgs = decodeCapture(small, { args: true });
const sArgs = (performance.now() - t) / 1000;
t = performance.now();
decodeCapture(small);
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
      traceEvents: [{ ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 1, tid: 1, ts: t0us, dur: 1e6, args: {} }],
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

if (!process.env.FLAGPROF_BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
else console.log(`kept ${file}`);
