// npm run bench — importer throughput and peak memory against plain JSON.parse of the same file, in the same run.
// Inputs: the largest real trace (decompressed to bench/out) and a synthetic ~1 GB trace made by repeating its
// events with shifted times and ids. Each measurement runs in its own process; the median of the runs is shown.
import { execFileSync } from 'node:child_process';
import { createWriteStream, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { loadBundle, out, root } from './lib.mjs';
import { gunzipSync } from 'node:zlib';

const runs = Number(process.env.BENCH_RUNS ?? 3);
const targetGB = Number(process.env.BENCH_SYNTHETIC_GB ?? 1);
// BENCH_TRACES=owlv2,mtia picks the real traces whose names contain one of the words; BENCH_SYNTHETIC_GB=0 skips
// the synthetic trace.
const picked = process.env.BENCH_TRACES?.split(',').filter(Boolean);

await loadBundle('import-child', 'bench/import-child.ts');
await loadBundle('analysisWorker', 'extension/analysis/worker.ts');

// Every real trace of ../shared/traces that is 10 MB or more once decompressed (decompressed to bench/out, once).
const tracesDir = path.resolve(root, '..', 'shared', 'traces');
const realTraces = [];
for (const name of readdirSync(tracesDir, { recursive: true }).map(String).sort()) {
  if (!/\.json(\.gz)?$/.test(name)) continue;
  if (picked && !picked.some((word) => name.includes(word))) continue;
  const source = path.join(tracesDir, name);
  const target = path.join(out, path.basename(name).replace(/\.gz$/, ''));
  if (!existsSync(target)) {
    const raw = readFileSync(source);
    if ((raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw).length < 10e6) continue;
    writeFileSync(target, raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw);
  }
  if (statSync(target).size >= 10e6) realTraces.push(target);
}
const real = path.join(out, 'tracelens_h100_owlv2_large.trace.json');

const synthetic = path.join(out, `synthetic_${targetGB}gb.trace.json`);
if (targetGB > 0 && !existsSync(synthetic)) await writeSynthetic(real, synthetic, targetGB * 1e9);

function measure(mode, file) {
  const results = [];
  for (let i = 0; i < runs; i++) {
    const line = execFileSync(
      process.execPath,
      ['--max-old-space-size=8192', path.join(out, 'import-child.cjs'), mode, file],
      {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      },
    );
    results.push(JSON.parse(line.trim().split('\n').pop()));
  }
  results.sort((a, b) => a.ms - b.ms);
  return results[Math.floor(results.length / 2)];
}

const inputs = [
  ...realTraces.map((file) => [path.basename(file).replace(/\.(pt\.)?trace\.json$/, ''), file]),
  ...(targetGB > 0 ? [[`synthetic ~${targetGB} GB`, synthetic]] : []),
];
const rows = [];
for (const [label, file] of inputs) {
  const mb = statSync(file).size / 1e6;
  const json = measure('json', file);
  const ours = measure('import', file);
  const js = measure('import-js', file);
  const mbps = (r) => (r.error ? 'fails' : (mb / (r.ms / 1000)).toFixed(0));
  const ratio = (r) =>
    json.error ? 'n/a (JSON.parse fails)' : r.error ? 'fails' : `${(json.ms / r.ms).toFixed(2)}x`;
  rows.push({
    input: label,
    'size MB': mb.toFixed(0),
    'JSON.parse MB/s': mbps(json),
    'import MB/s': mbps(ours),
    'vs JSON.parse': ratio(ours),
    'native scan MB/s': ours.scanMs ? (mb / (ours.scanMs / 1000)).toFixed(0) : 'n/a',
    'scan vs JSON.parse': json.error || !ours.scanMs ? 'n/a' : `${(json.ms / ours.scanMs).toFixed(2)}x`,
    'TS parser MB/s': mbps(js),
    'TS vs JSON.parse': ratio(js),
    'JSON.parse peak MB': json.error ? `— (${json.error.slice(0, 40)})` : json.maxRssMB,
    'import peak MB': ours.maxRssMB,
    'RSS / file': `${(ours.maxRssMB / mb).toFixed(2)}x`,
    slices: ours.slices ?? ours.error,
  });
  if (ours.slices !== js.slices)
    throw new Error(`${label}: the native path read ${ours.slices} slices, the TS parser ${js.slices}`);
}
console.table(rows);
// The analysis as the extension runs it (on its worker thread) against the same pass on the host's thread.
const analysisRows = [];
for (const [label, file] of inputs) {
  const r = measure('analysis', file);
  if (r.error) throw new Error(`${label}: analysis: ${r.error}`);
  analysisRows.push({
    input: label,
    slices: r.slices,
    // Shared where the runtime frees outgrown columns at once (Node 21+, as the editor's host): else copied.
    'columns to worker': r.shared ? 'shared' : 'copied',
    'analysis ms (here)': r.hereMs,
    'analysis ms (worker)': r.workerMs,
    'worker / here': `${(r.workerMs / r.hereMs).toFixed(2)}x`,
    'longest stall ms (here)': r.hereStallMs,
    'longest stall ms (worker)': r.workerStallMs,
  });
}
console.table(analysisRows);
const model = measure('model', String(10_000_000));
console.log(
  `model sizing: 10,000,000 slices in ${model.modelMB} MB of columns, peak RSS ${model.maxRssMB} MB (target < 1 GB)`,
);
console.log(
  `(median of ${runs} runs each; import = the native parse path, TS parser = its reference and fallback; ` +
    `targets: import >= 1.5x JSON.parse, peak RSS <= 1.5x the file at 1 GB, the 1 GB file imports; ` +
    `the analysis's worker leaves the host's thread no stall of more than 100 ms)`,
);

async function writeSynthetic(source, target, bytes) {
  const parsed = JSON.parse(readFileSync(source, 'utf8'));
  const events = parsed.traceEvents.filter((e) => e.ph !== 'M');
  const meta = parsed.traceEvents.filter((e) => e.ph === 'M');
  // Each copy follows the one before it: shifted by the trace's span (its first event to its last end).
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const e of events) {
    if (typeof e.ts !== 'number') continue;
    first = Math.min(first, e.ts);
    last = Math.max(last, e.ts + (e.dur ?? 0));
  }
  const span = last - first;
  const stream = createWriteStream(target);
  const write = (text) => (stream.write(text) ? undefined : new Promise((r) => stream.once('drain', r)));
  const header = { ...parsed, traceEvents: undefined };
  delete header.traceEvents;
  await write(`${JSON.stringify(header).slice(0, -1)},"traceEvents":[\n`);
  await write(meta.map((e) => JSON.stringify(e)).join(',\n'));
  let written = 0;
  let copy = 0;
  while (written < bytes) {
    const shift = (copy + 1) * (span + 1000);
    const idShift = (copy + 1) * 10_000_000;
    const chunk = [];
    for (const e of events) {
      const c = { ...e, ts: e.ts + shift };
      if (c.args) {
        c.args = { ...c.args };
        if (typeof c.args['External id'] === 'number') c.args['External id'] += idShift;
        if (typeof c.args.correlation === 'number') c.args.correlation += idShift;
      }
      if (typeof c.id === 'number') c.id += idShift;
      chunk.push(JSON.stringify(c));
    }
    const text = `,\n${chunk.join(',\n')}`;
    written += text.length;
    await write(text);
    copy++;
  }
  await write('\n]}\n');
  await new Promise((r) => stream.end(r));
  execFileSync('sync');
}
