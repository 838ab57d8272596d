// The analysis on its worker thread (analysis/offThread.ts) against the same pass on this thread, on real traces:
// the result must be the same, field for field; a cancelled analysis stops and the next one runs; a worker that
// cannot start leaves the analysis to this thread.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { analyze } from '../../extension/analysis/analyze';
import { AnalysisCancelled, analyzeOffThread } from '../../extension/analysis/offThread';
import type { Analysis } from '../../extension/analysis/types';
import { importTrace } from '../../extension/import/kineto';
import { isOpKind, SliceTable, type Profile, type SourceFrame } from '../../extension/model/profile';
import { ROOT, tracePath } from '../helpers/traces';
import { bundleWorker } from '../helpers/workerBundle';

let dir: string;
let workerFile: string;

beforeAll(async () => {
  // The worker bundled from the sources under test, as scripts/build.mjs bundles dist/analysisWorker.js.
  dir = mkdtempSync(path.join(tmpdir(), 'flagprof-worker-'));
  workerFile = await bundleWorker('extension/analysis/worker.ts', path.join(dir, 'analysisWorker.js'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function withoutProfile(analysis: Analysis): Omit<Analysis, 'profile'> {
  const { profile: _profile, ...rest } = analysis;
  return rest;
}

async function imported(name: string): Promise<Profile> {
  return importTrace(path.join(ROOT, tracePath(name)));
}

/** Exact call sites for every third op, chains shared between ops as sites.json shares them. */
function withSites(profile: Profile): Profile {
  const { slices } = profile;
  const chains: SourceFrame[][] = [
    [{ file: '/work/train.py', line: 12, function: 'step', column: 5, endLine: 12, endColumn: 30 }],
    [
      { file: '/work/model.py', line: 40, function: 'forward' },
      { file: '/work/train.py', line: 20, function: '<module>' },
    ],
  ];
  profile.sites = new Map();
  let k = 0;
  for (let i = 0; i < slices.length; i++) {
    if (!isOpKind(slices.kind[i]) || Number.isNaN(slices.externalId[i])) continue;
    if (k++ % 3 === 0) profile.sites.set(slices.externalId[i], chains[k % 2]);
  }
  return profile;
}

describe.each([
  'tracelens_h100_owlv2_large.trace.json.gz',
  'tracelens_mi300x8_resnet_act_ckpt_rank0.trace.json.gz',
  'ascend_npu_trace_view.json',
])('%s', (name) => {
  it('gives the analysis the calling thread gives', async () => {
    const profile = await imported(name);
    const here = analyze(profile);
    const places: string[] = [];
    const there = await analyzeOffThread(profile, {
      workerFile,
      always: true,
      onPlace: (p) => places.push(p),
    });
    expect(places).toEqual(['worker']);
    expect(there.profile).toBe(profile);
    expect(there.opOf.length).toBe(profile.slices.length);
    expect(withoutProfile(there)).toEqual(withoutProfile(here));
    // The profile itself is untouched: its columns were copied, not moved.
    expect(profile.slices.kind.length).toBeGreaterThanOrEqual(profile.slices.length);
    expect(analyze(profile).ops).toEqual(here.ops);
  });
});

it('reads columns in shared memory where they are (as a finished import leaves them on Node 21+)', async () => {
  const profile = await imported('tracelens_h100_owlv2_large.trace.json.gz');
  const here = analyze(profile);
  const { columns } = profile.slices;
  for (const name of SliceTable.columnNames) {
    const column = columns[name];
    const Ctor = column.constructor as new (buffer: SharedArrayBuffer) => typeof column;
    const shared = new Ctor(new SharedArrayBuffer(column.byteLength));
    shared.set(column as never);
    columns[name] = shared;
  }
  const places: string[] = [];
  const there = await analyzeOffThread(profile, { workerFile, always: true, onPlace: (p) => places.push(p) });
  expect(places).toEqual(['worker']);
  expect(profile.slices.start.buffer).toBeInstanceOf(SharedArrayBuffer);
  expect(withoutProfile(there)).toEqual(withoutProfile(here));
});

it('keeps exact call sites, chains shared between ops included', async () => {
  const profile = withSites(await imported('tracelens_h100_bert_small.trace.json.gz'));
  const here = analyze(profile);
  expect(here.lines.some((line) => line.file === '/work/model.py')).toBe(true);
  const places: string[] = [];
  const there = await analyzeOffThread(profile, { workerFile, always: true, onPlace: (p) => places.push(p) });
  expect(places).toEqual(['worker']);
  expect(withoutProfile(there)).toEqual(withoutProfile(here));
});

it('stops when cancelled, and the next analysis runs on a new worker', async () => {
  const profile = await imported('tracelens_h100_owlv2_large.trace.json.gz');
  const controller = new AbortController();
  const cancelled = analyzeOffThread(profile, { workerFile, always: true, signal: controller.signal });
  controller.abort();
  await expect(cancelled).rejects.toBeInstanceOf(AnalysisCancelled);
  await expect(
    analyzeOffThread(profile, { workerFile, always: true, signal: controller.signal }),
  ).rejects.toBeInstanceOf(AnalysisCancelled);
  const places: string[] = [];
  const after = await analyzeOffThread(profile, { workerFile, always: true, onPlace: (p) => places.push(p) });
  expect(places).toEqual(['worker']);
  expect(after.ops).toEqual(analyze(profile).ops);
});

it('analyses small profiles on this thread (the round trip would cost more)', async () => {
  const profile = await imported('ascend_npu_trace_view.json');
  expect(profile.slices.length).toBeLessThan(20_000);
  const places: string[] = [];
  await analyzeOffThread(profile, { workerFile, onPlace: (p) => places.push(p) });
  expect(places).toEqual(['here']);
});

it('analyses on this thread where the worker cannot start', async () => {
  const profile = await imported('tracelens_mi300x8_resnet_act_ckpt_rank0.trace.json.gz');
  const missing = path.join(dir, 'no-such-worker.js');
  const places: string[] = [];
  const analysis = await analyzeOffThread(profile, {
    workerFile: missing,
    always: true,
    onPlace: (place, why) => places.push(`${place}: ${why}`),
  });
  expect(places).toEqual([expect.stringMatching(/^here: .*no-such-worker\.js/)]);
  expect(withoutProfile(analysis)).toEqual(withoutProfile(analyze(profile)));
});
