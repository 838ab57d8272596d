// npm run bench — importer throughput and peak memory against plain JSON.parse of the same file, in the same run.
// Inputs: the largest real trace (decompressed to bench/out) and a synthetic ~1 GB trace made by repeating its
// events with shifted times and ids. Each measurement runs in its own process; the median of the runs is shown.
import { execFileSync } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { loadBundle, out, root } from './lib.mjs';
import { gunzipSync } from 'node:zlib';

const runs = Number(process.env.BENCH_RUNS ?? 3);
const targetGB = Number(process.env.BENCH_SYNTHETIC_GB ?? 1);

await loadBundle('import-child', 'bench/import-child.ts');

const realGz = path.resolve(root, '..', 'shared', 'traces', 'tracelens_h100_owlv2_large.trace.json.gz');
const real = path.join(out, 'owlv2_large.trace.json');
if (!existsSync(real)) writeFileSync(real, gunzipSync(readFileSync(realGz)));

const synthetic = path.join(out, `synthetic_${targetGB}gb.trace.json`);
if (!existsSync(synthetic)) await writeSynthetic(real, synthetic, targetGB * 1e9);

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

const rows = [];
for (const [label, file] of [
  ['owlv2_large (real)', real],
  [`synthetic ~${targetGB} GB`, synthetic],
]) {
  const mb = statSync(file).size / 1e6;
  const json = measure('json', file);
  const ours = measure('import', file);
  const mbps = (r) => (r.error ? 'fails' : (mb / (r.ms / 1000)).toFixed(0));
  rows.push({
    input: label,
    'size MB': mb.toFixed(0),
    'JSON.parse MB/s': mbps(json),
    'import MB/s': mbps(ours),
    'throughput ratio': json.error ? 'n/a (JSON.parse fails)' : `${(json.ms / ours.ms).toFixed(2)}x`,
    'JSON.parse peak RSS MB': json.error ? `— (${json.error.slice(0, 40)})` : json.maxRssMB,
    'import peak RSS MB': ours.maxRssMB,
    'RSS / file size': `${(ours.maxRssMB / mb).toFixed(2)}x`,
    slices: ours.slices ?? ours.error,
  });
}
console.table(rows);
const model = measure('model', String(10_000_000));
console.log(
  `model sizing: 10,000,000 slices in ${model.modelMB} MB of columns, peak RSS ${model.maxRssMB} MB (target < 1 GB)`,
);
console.log(
  `(median of ${runs} runs each; targets: throughput ratio >= 1.0x, peak RSS <= 3x file size, the 1 GB file imports)`,
);

async function writeSynthetic(source, target, bytes) {
  const parsed = JSON.parse(readFileSync(source, 'utf8'));
  const events = parsed.traceEvents.filter((e) => e.ph !== 'M');
  const meta = parsed.traceEvents.filter((e) => e.ph === 'M');
  let span = 0;
  for (const e of events) if (typeof e.ts === 'number') span = Math.max(span, e.ts + (e.dur ?? 0));
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
