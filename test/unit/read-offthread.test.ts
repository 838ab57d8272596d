// The import on its worker thread (timeline/readOffThread.ts) against importTrace on this thread, on real traces: the
// same profile, field for field and class for class; progress, the partial profile of a slow read, Cancel and a
// bad trace's one-line error cross the thread; a worker that cannot start leaves the reading to this thread.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ImportCancelled, importTrace } from '../../extension/import/kineto';
import { importOffThread, takeFirstFrame } from '../../extension/timeline/readOffThread';
import { encodeTimeline } from '../../extension/timeline/encode';
import { unpackTimeline } from '../../extension/protocol';
import { gunzipSync } from 'node:zlib';
import { ImportError } from '../../extension/import/errors';
import {
  ArgsArena,
  CounterTable,
  FlowTable,
  MemoryTable,
  Profile,
  SliceTable,
} from '../../extension/model/profile';
import { StringTable } from '../../extension/model/strings';
import { ROOT, tracePath } from '../helpers/traces';
import { bundleWorker } from '../helpers/workerBundle';

let dir: string;
let workerFile: string;

beforeAll(async () => {
  // The worker bundled from the sources under test, as scripts/build.mjs bundles dist/readWorker.js; inside the
  // project, so that it finds the native addon as the packaged one does.
  mkdirSync(path.join(ROOT, 'out'), { recursive: true });
  dir = mkdtempSync(path.join(ROOT, 'out', 'read-worker-'));
  workerFile = await bundleWorker('extension/timeline/readWorker.ts', path.join(dir, 'readWorker.js'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A digest of a typed array's bytes, capacity included (both sides allocate alike). */
function digest(view: ArrayBufferView): string {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  return `${view.constructor.name}:${view.byteLength}:${createHash('sha1').update(bytes).digest('hex')}`;
}

/** A profile as comparable data: its typed arrays (one level into its tables) as digests, everything else as is. */
function comparable(value: unknown, depth = 0): unknown {
  if (ArrayBuffer.isView(value)) return digest(value);
  if (
    depth > 1 ||
    value === null ||
    typeof value !== 'object' ||
    value instanceof Map ||
    Array.isArray(value)
  )
    return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, comparable(inner, depth + 1)]));
}

function expectSameProfile(there: Profile, here: Profile): void {
  // Read on the worker, the args texts are in shared memory (ArgsArena.useSharedMemory); the rest is the same.
  const withoutShared = (profile: Profile) => {
    const data = comparable(profile) as { args: Record<string, unknown> };
    delete data.args.shared;
    return data;
  };
  expect(withoutShared(there)).toEqual(withoutShared(here));
  // The classes are back: their methods answer as the original's do.
  expect(there).toBeInstanceOf(Profile);
  expect(there.strings).toBeInstanceOf(StringTable);
  expect(there.slices).toBeInstanceOf(SliceTable);
  expect(there.flows).toBeInstanceOf(FlowTable);
  expect(there.args).toBeInstanceOf(ArgsArena);
  if (here.memory) expect(there.memory).toBeInstanceOf(MemoryTable);
  if (here.counters) expect(there.counters).toBeInstanceOf(CounterTable);
  const n = here.slices.length;
  for (const i of [0, Math.floor(n / 2), n - 1]) {
    expect(there.nameOf(i)).toBe(here.nameOf(i));
    expect(there.argsOf(i)).toEqual(here.argsOf(i));
  }
  expect(there.strings.intern(here.nameOf(0))).toBe(here.slices.name[0]);
}

describe.each([
  'tracelens_h100_owlv2_large.trace.json.gz',
  'kineto_tbplugin_2021_v100_resnet50_w0.pt.trace.json.gz',
  'ascend_npu_trace_view.json',
  'kineto_plugin_2020_resnet50_w0_array.pt.trace.json.gz',
])('%s', (name) => {
  it('gives the profile importTrace gives on this thread', async () => {
    const file = path.join(ROOT, tracePath(name));
    const here = await importTrace(file);
    const places: string[] = [];
    const progress: number[] = [];
    const timings = {};
    const there = await importOffThread(file, {
      workerFile,
      timings,
      onProgress: (fraction) => progress.push(fraction),
      onPlace: (place) => places.push(place),
    });
    expect(places).toEqual(['worker']);
    expectSameProfile(there, here);
    expect(there.args.isShared).toBe(true);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toBe(1);
    expect(timings).toMatchObject({ parser: 'native' });
  });
});

it("encodes the first frame's payload where it reads, as the host would encode it", async () => {
  const file = path.join(ROOT, tracePath('tracelens_mi300x8_resnet_act_ckpt_rank0.trace.json.gz'));
  const atMs = Date.now();
  const encode = { argsOnRequest: true, source: file, title: 'resnet · 18:02', opened: { atMs } };
  const request = { encode, startedAtMs: atMs };
  const profile = await importOffThread(file, { workerFile, firstFrame: request });
  // Only for the request it was encoded for, and only once.
  expect(takeFirstFrame(profile, { ...request })).toBeUndefined();
  const payload = takeFirstFrame(profile, request);
  expect(takeFirstFrame(profile, request)).toBeUndefined();
  expect(payload).toBeInstanceOf(ArrayBuffer);
  const there = unpackTimeline(gunzipSync(new Uint8Array(payload!)).buffer);
  const here = encodeTimeline(await importTrace(file), undefined, encode);
  const { opened, ...header } = there.header;
  expect(header).toEqual((({ opened: _o, ...rest }) => rest)(here.header));
  expect(opened).toMatchObject({ atMs, parseMs: expect.any(Number) });
  expect(opened!.readMs).toBeGreaterThanOrEqual(0);
  expect(opened!.readMs).toBeLessThanOrEqual(Date.now() - atMs);
  expect(comparable(there.columns)).toEqual(comparable(here.columns));
  // A read on this thread encodes nothing: the caller encodes.
  const here2 = await importOffThread(file, { workerFile: path.join(dir, 'none.js'), firstFrame: request });
  expect(takeFirstFrame(here2, request)).toBeUndefined();
});

it('carries counters and warnings', async () => {
  const file = path.join(dir, 'counters.trace.json');
  const events = [
    { ph: 'X', name: 'aten::mm', cat: 'cpu_op', pid: 1, tid: 1, ts: 10, dur: 5, args: { 'External id': 1 } },
    { ph: 'C', name: 'GPU util', pid: 1, ts: 10, args: { value: 40 } },
    { ph: 'C', name: 'GPU util', pid: 1, ts: 20, args: { value: 60 } },
    { ph: 'X', name: 'no time', cat: 'cpu_op', pid: 1, tid: 1 },
  ];
  writeFileSync(file, JSON.stringify({ traceEvents: events }));
  const here = await importTrace(file);
  expect(here.counters?.length).toBe(2);
  const there = await importOffThread(file, { workerFile });
  expectSameProfile(there, here);
  expect(there.counters?.length).toBe(2);
  expect(there.warnings).toEqual(here.warnings);
});

it('hands over the partial profile of a slow read, its args readable', async () => {
  const file = path.join(ROOT, tracePath('tracelens_h100_owlv2_large.trace.json.gz'));
  const partials: [Profile, number][] = [];
  const profile = await importOffThread(file, {
    workerFile,
    partialAfterMs: 0,
    partialMinReadMs: 0,
    onPartial: (partial, fraction) => partials.push([partial, fraction]),
  });
  expect(partials).toHaveLength(1);
  const [partial, fraction] = partials[0];
  expect(fraction).toBeGreaterThan(0);
  expect(fraction).toBeLessThan(0.5);
  expect(partial).toBeInstanceOf(Profile);
  expect(partial.slices.length).toBeGreaterThan(0);
  expect(partial.slices.length).toBeLessThan(profile.slices.length);
  const withArgs = partial.slices.args.findIndex((a) => a >= 0);
  expect(partial.argsOf(withArgs)).toEqual(profile.argsOf(withArgs));
  // Its texts were not copied: the arena the import read on into, in shared memory.
  expect(partial.args.isShared).toBe(true);
  expect(partial.args.raw().bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
});

it('stops when cancelled, and reads the next trace', async () => {
  const file = path.join(ROOT, tracePath('tracelens_h100_owlv2_large.trace.json.gz'));
  const controller = new AbortController();
  const cancelled = importOffThread(file, { workerFile, signal: controller.signal });
  setTimeout(() => controller.abort(), 20);
  await expect(cancelled).rejects.toBeInstanceOf(ImportCancelled);
  await expect(cancelled).rejects.toThrow(/opening it was cancelled/);
  const places: string[] = [];
  const next = await importOffThread(path.join(ROOT, tracePath('ascend_npu_trace_view.json')), {
    workerFile,
    onPlace: (place) => places.push(place),
  });
  expect(places).toEqual(['worker']);
  expect(next.slices.length).toBe(2212);
});

/** The error a read ends with (a read that succeeds fails the test). */
function failure(reading: Promise<Profile>): Promise<Error> {
  return reading.then(
    () => {
      throw new Error('the read succeeded');
    },
    (error: unknown) => error as Error,
  );
}

it("raises a bad trace's error as importTrace does: the same class, the same one line", async () => {
  const file = path.join(dir, 'broken.trace.json');
  writeFileSync(file, '{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2},');
  const here = await failure(importTrace(file));
  const there = await failure(importOffThread(file, { workerFile }));
  expect(here).toBeInstanceOf(ImportError);
  expect(there).toBeInstanceOf(ImportError);
  expect(there.message).toBe(here.message);
  const missing = path.join(dir, 'no-such.trace.json');
  const gone = await failure(importOffThread(missing, { workerFile }));
  expect(gone).toBeInstanceOf(ImportError);
  expect(gone.message).toBe(`${missing}: cannot open: ENOENT`);
});

it('reads on this thread where the worker cannot start', async () => {
  const file = path.join(ROOT, tracePath('ascend_npu_trace_view.json'));
  const places: string[] = [];
  const profile = await importOffThread(file, {
    workerFile: path.join(dir, 'no-such-worker.js'),
    onPlace: (place, why) => places.push(`${place}: ${why}`),
  });
  expect(places).toEqual([expect.stringMatching(/^here: .*no-such-worker\.js/)]);
  expectSameProfile(profile, await importTrace(file));
});
