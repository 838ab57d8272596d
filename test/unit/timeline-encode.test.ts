import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { reindex } from '../../extension/import/finish';
import { Profile, SliceKind, isDeviceKind, type SourceFrame } from '../../extension/model/profile';
import {
  packAnalysis,
  packTimeline,
  unpackAnalysis,
  unpackTimeline,
  withAnalysis,
  type TimelinePayload,
} from '../../extension/protocol';
import {
  encodeAnalysis,
  encodeTimeline,
  LINKING_PENDING,
  orderTracks,
} from '../../extension/timeline/encode';
import { isProfilerFile, isProfilerFrameName } from '../../extension/timeline/profilerFrames';
import { parentOf } from '../../webview/timeline/hitTest';
import { TimelineModel } from '../../webview/model';
import { syntheticProfile } from '../fixtures/synthetic-profile';

describe('encodeTimeline', () => {
  const { profile, analysis } = syntheticProfile({ slices: 5_000, threads: 3, streams: 2 });
  const payload = encodeTimeline(profile, analysis, { title: 'synthetic' });
  const c = payload.columns;

  it('has no profiler frames to hide in a trace of the user code alone', () => {
    expect(c.profilerFrames).toHaveLength(0);
    expect(payload.header.profilerLines).toEqual([]);
  });

  it('keeps every slice once, in lanes of one track and depth, sorted by start', () => {
    expect(payload.header.sliceCount).toBe(profile.slices.length);
    const seen = new Uint8Array(profile.slices.length);
    for (let lane = 0; lane < c.laneTrack.length; lane++) {
      for (let k = c.laneOffset[lane]; k < c.laneOffset[lane + 1]; k++) {
        const slice = c.laneOrder[k];
        seen[slice]++;
        expect(c.track[slice]).toBe(c.laneTrack[lane]);
        expect(c.depth[slice]).toBe(c.laneDepth[lane]);
        if (k > c.laneOffset[lane])
          expect(c.start[slice]).toBeGreaterThanOrEqual(c.start[c.laneOrder[k - 1]]);
      }
    }
    expect(seen.every((n) => n === 1)).toBe(true);
  });

  it('lists host threads before device streams', () => {
    const kinds = payload.header.tracks.map((t) => t.kind);
    expect(kinds.indexOf('device')).toBeGreaterThan(kinds.lastIndexOf('cpu'));
  });

  it('pairs every launched device slice with its runtime call, sorted by launch start', () => {
    let device = 0;
    for (let i = 0; i < profile.slices.length; i++) if (isDeviceKind(c.kind[i])) device++;
    expect(c.flowTo.length).toBe(device);
    for (let k = 0; k < c.flowTo.length; k++) {
      expect(c.runtimeOf[c.flowTo[k]]).toBe(c.flowFrom[k]);
      expect(c.kind[c.flowFrom[k]]).toBe(SliceKind.Runtime);
      if (k > 0) expect(c.start[c.flowFrom[k]]).toBeGreaterThanOrEqual(c.start[c.flowFrom[k - 1]]);
    }
  });

  it("gives device slices their launching op's source site", () => {
    for (let k = 0; k < c.flowTo.length; k++) {
      const kernel = c.flowTo[k];
      const op = c.opOf[kernel];
      expect(op).toBeGreaterThanOrEqual(0);
      expect(c.site[kernel]).toBe(analysis.lineOf[op]);
      expect(payload.header.tables.lines[c.site[kernel]].file).toBe('/home/user/project/train.py');
    }
  });

  it('carries each args object as its JSON bytes', () => {
    const kernel = c.flowTo[0];
    const a = c.args[kernel];
    const text = new TextDecoder().decode(c.argsBytes.subarray(c.argsOffset[a], c.argsOffset[a + 1]));
    expect(JSON.parse(text)).toEqual(profile.argsOf(kernel));
  });

  it('survives packTimeline / unpackTimeline unchanged', () => {
    const back = unpackTimeline(packTimeline(payload));
    expect(back.header).toEqual(JSON.parse(JSON.stringify(payload.header)));
    for (const name of Object.keys(c) as (keyof typeof c)[]) {
      expect(Array.from(back.columns[name]), name).toEqual(Array.from(c[name]));
    }
  });

  it('carries any lane order through its differences (int32 wraps alike both ways)', () => {
    const n = c.laneOrder.length;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2 ** 31 - 1 }), { minLength: n, maxLength: n }),
        (order) => {
          const laneOrder = Int32Array.from(order);
          const back = unpackTimeline(packTimeline({ ...payload, columns: { ...c, laneOrder } }));
          expect(Array.from(back.columns.laneOrder)).toEqual(order);
          // The payload's own column is not touched by packing.
          expect(Array.from(laneOrder)).toEqual(order);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('rejects a buffer that is not a timeline, with a one-line reason', () => {
    expect(() => unpackTimeline(new ArrayBuffer(4))).toThrow('timeline data is truncated');
    expect(() => unpackTimeline(new Uint8Array(64).buffer)).toThrow('timeline data has the wrong format');
  });
});

describe('a payload drawn before its analysis, and the analysis that follows it', () => {
  const { profile, analysis } = syntheticProfile({ slices: 5_000, threads: 3, streams: 2 });
  const whole = encodeTimeline(profile, analysis, { title: 'synthetic' });
  const pending = unpackTimeline(packTimeline(encodeTimeline(profile, undefined, { title: 'synthetic' })));
  const follow = unpackAnalysis(packAnalysis(encodeAnalysis(profile, analysis, 12.5)));

  it('holds the slices and lanes, but no links, sites, flows or tables, and says the analysis is coming', () => {
    expect(pending.header.linkingPending).toBe(LINKING_PENDING);
    expect(pending.header.tables).toEqual({ ops: [], kernels: [], lines: [] });
    for (const name of ['opOf', 'runtimeOf', 'site'] as const)
      expect(
        pending.columns[name].every((v) => v === -1),
        name,
      ).toBe(true);
    expect(pending.columns.flowTo).toHaveLength(0);
    for (const name of ['start', 'dur', 'name', 'laneOrder', 'laneOffset'] as const)
      expect(Array.from(pending.columns[name]), name).toEqual(Array.from(whole.columns[name]));
    expect(whole.columns.flowTo.length).toBeGreaterThan(0);
  });

  it('put together, is the whole payload, byte for byte', () => {
    const joined = withAnalysis(pending, follow);
    expect(joined.header).toEqual(JSON.parse(JSON.stringify(whole.header)));
    expect(follow.header.analysisMs).toBe(12.5);
    for (const name of Object.keys(whole.columns) as (keyof typeof whole.columns)[])
      expect(Array.from(joined.columns[name]), name).toEqual(Array.from(whole.columns[name]));
  });

  it('is not taken for a timeline, nor a timeline for it', () => {
    const analysisBytes = packAnalysis(follow);
    expect(() => unpackTimeline(analysisBytes)).toThrow('timeline data has the wrong format');
    expect(() => unpackAnalysis(packTimeline(whole))).toThrow('the analysis data has the wrong format');
  });
});

describe('orderTracks', () => {
  it('groups tracks by process, CPU threads first, whatever the input order', () => {
    const base = {
      name: '',
      processName: '',
      processSortIndex: 0,
      threadSortIndex: 0,
      sliceCount: 0,
      maxDepth: 0,
    };
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            pid: fc.constantFrom('1', '2', '10'),
            tid: fc.integer({ min: 0, max: 50 }),
            device: fc.boolean(),
          }),
          {
            maxLength: 30,
          },
        ),
        (specs) => {
          const tracks = specs.map((s, id) => ({
            ...base,
            id,
            pid: s.device ? `gpu${s.pid}` : s.pid,
            tid: String(s.tid),
            kind: (s.device ? 'device' : 'cpu') as 'device' | 'cpu',
          }));
          const ordered = orderTracks(tracks);
          expect(ordered.map((t) => t.id).sort((a, b) => a - b)).toEqual(tracks.map((t) => t.id));
          // Each process is contiguous, and host processes come before device ones.
          const seen = new Set<string>();
          let last = '';
          let sawDevice = false;
          for (const t of ordered) {
            if (t.pid !== last) {
              expect(seen.has(t.pid)).toBe(false);
              seen.add(t.pid);
              last = t.pid;
            }
            if (t.kind === 'device') sawDevice = true;
            else expect(sawDevice).toBe(false);
          }
        },
      ),
    );
  });
});

const USER = '/home/user/proj/model.py';
const AGENT = '/opt/flagos/native/agent/python/flagprof_agent/__main__.py';

/**
 * A Profile Current File session's main thread: runpy and the capture agent run the user's module, which calls
 * forward(), whose matmul (called at model.py:40:12) launches a kernel; at the end the agent calls torch.profiler,
 * which calls into json. A second thread has no profiler frames.
 */
function sessionProfile() {
  const profile = new Profile('/sessions/run/trace.json.gz');
  const s = profile.strings;
  for (const [id, tid, kind] of [
    [0, '1', 'cpu'],
    [1, '2', 'cpu'],
    [2, '7', 'device'],
  ] as const) {
    profile.tracks.push({
      id,
      pid: kind === 'device' ? '0' : '100',
      tid,
      kind,
      name: `t${tid}`,
      processName: kind === 'device' ? 'GPU 0' : 'python',
      processSortIndex: kind === 'device' ? 1 : 0,
      threadSortIndex: id,
      sliceCount: 0,
      maxDepth: 0,
    });
  }
  const py = s.intern('python_function');
  const slices: Record<string, number> = {};
  const frame = (key: string, track: number, start: number, dur: number, name: string) => {
    slices[key] = profile.slices.push(
      SliceKind.PythonFunction,
      track,
      start,
      dur,
      s.intern(name),
      py,
      NaN,
      NaN,
      -1,
    );
  };
  frame('runModule', 0, 0, 10_000, '<frozen runpy>(198): _run_module_as_main');
  frame('runCode', 0, 10, 9_980, '<frozen runpy>(88): _run_code');
  frame('agentMain', 0, 20, 9_960, `${AGENT}(483): main`);
  frame('module', 0, 100, 8_000, `${USER}(1): <module>`);
  frame('forward', 0, 200, 5_000, `${USER}(16): forward`);
  frame('site', 0, 250, 4_000, '<flagprof-site>(0): site_index');
  slices.matmul = profile.slices.push(
    SliceKind.CpuOp,
    0,
    300,
    3_000,
    s.intern('aten::matmul'),
    s.intern('cpu_op'),
    NaN,
    5,
    -1,
  );
  slices.launch = profile.slices.push(
    SliceKind.Runtime,
    0,
    400,
    500,
    s.intern('cudaLaunchKernel'),
    s.intern('cuda_runtime'),
    77,
    5,
    -1,
  );
  slices.kernel = profile.slices.push(
    SliceKind.Kernel,
    2,
    1_000,
    2_000,
    s.intern('gemm'),
    s.intern('kernel'),
    77,
    5,
    -1,
  );
  frame('profilerCall', 0, 8_500, 1_000, 'torch/profiler/profiler.py(538): add_metadata_json');
  frame('json', 0, 8_600, 500, 'json/encoder.py(183): encode');
  frame('other', 1, 0, 3_000, `${USER}(30): worker`);
  frame('otherRunpy', 1, 3_500, 1_000, '/usr/lib/python3.10/runpy.py(86): _run_code');
  frame('otherChild', 1, 3_600, 500, `${USER}(31): step`);
  slices.add = profile.slices.push(
    SliceKind.CpuOp,
    1,
    3_700,
    100,
    s.intern('aten::add'),
    s.intern('cpu_op'),
    NaN,
    9,
    -1,
  );
  const call: SourceFrame[] = [
    { file: USER, line: 40, column: 12, endColumn: 30, function: 'forward' },
    { file: USER, line: 3, function: '<module>' },
  ];
  profile.sites = new Map([[5, call]]);
  profile.eventCount = profile.slices.length;
  reindex(profile);
  return { profile, analysis: analyze(profile), slices };
}

/** Per slice: the lane it is in (-1 for none), checking that each lane holds one track and is sorted by start. */
function lanesOf(payload: TimelinePayload): { lane: Int32Array; depth: Int32Array } {
  const c = payload.columns;
  const lane = new Int32Array(payload.header.sliceCount).fill(-1);
  const depth = new Int32Array(payload.header.sliceCount).fill(-1);
  for (let l = 0; l < c.laneTrack.length; l++) {
    for (let k = c.laneOffset[l]; k < c.laneOffset[l + 1]; k++) {
      const slice = c.laneOrder[k];
      expect(lane[slice], `slice ${slice} in two lanes`).toBe(-1);
      expect(c.track[slice]).toBe(c.laneTrack[l]);
      if (k > c.laneOffset[l]) expect(c.start[slice]).toBeGreaterThanOrEqual(c.start[c.laneOrder[k - 1]]);
      lane[slice] = l;
      depth[slice] = c.laneDepth[l];
    }
  }
  return { lane, depth };
}

describe("a torchrun worker's start-up frames", () => {
  // Python's startup imports the agent's sitecustomize, which runs the whole script: those frames are the
  // profiler's; an import the user's code makes keeps its import machinery visible.
  const profile = new Profile('/sessions/run/ranks/0/trace.json.gz');
  const s = profile.strings;
  profile.tracks.push({
    id: 0,
    pid: '100',
    tid: '1',
    kind: 'cpu',
    name: 't1',
    processName: 'python',
    processSortIndex: 0,
    threadSortIndex: 0,
    sliceCount: 0,
    maxDepth: 0,
  });
  const py = s.intern('python_function');
  const at: Record<string, number> = {};
  const frame = (key: string, start: number, dur: number, name: string) => {
    at[key] = profile.slices.push(SliceKind.PythonFunction, 0, start, dur, s.intern(name), py, NaN, NaN, -1);
  };
  frame('site', 0, 10_000, '<frozen site>(616): <module>');
  frame('siteMain', 1, 9_998, '<frozen site>(548): execsitecustomize');
  frame('findAndLoad', 2, 9_996, '<frozen importlib._bootstrap>(1176): _find_and_load');
  frame('execModule', 3, 9_994, '<frozen importlib._bootstrap_external>(940): exec_module');
  frame('sitecustomize', 4, 9_990, '/opt/flagprof/ranks_boot/sitecustomize.py(62): <module>');
  frame('module', 100, 9_000, `${USER}(1): <module>`);
  frame('userImport', 200, 1_000, '<frozen importlib._bootstrap>(1176): _find_and_load');
  frame('helper', 300, 500, '/home/user/proj/helper.py(1): <module>');
  profile.eventCount = profile.slices.length;
  reindex(profile);
  const c = encodeTimeline(profile, analyze(profile)).columns;

  it('hides site, the import that ran the sitecustomize and the sitecustomize itself, not the user’s import', () => {
    const hidden = ['site', 'siteMain', 'findAndLoad', 'execModule', 'sitecustomize'].map((k) => at[k]);
    expect(Array.from(c.profilerFrames)).toEqual(hidden.sort((a, b) => a - b));
    expect(c.profilerFrames).not.toContain(at.userImport);
    expect(c.profilerFrames).not.toContain(at.helper);
  });
});

describe("the profiler's own frames", () => {
  const { profile, analysis, slices } = sessionProfile();
  const payload = encodeTimeline(profile, analysis);
  const c = payload.columns;
  const hidden = ['runModule', 'runCode', 'agentMain', 'site', 'profilerCall', 'otherRunpy'];

  it('are the agent, runpy, torch.profiler and the call-site trampolines, and nothing of the user', () => {
    expect(Array.from(c.profilerFrames)).toEqual(hidden.map((k) => slices[k]).sort((a, b) => a - b));
    for (const name of [
      '<frozen runpy>(88): _run_code',
      '/usr/lib/python3.10/runpy.py(196): _run_module_as_main',
      'C:\\Python\\Lib\\site-packages\\flagprof_agent\\window.py(147): _start_profiler',
      '/venv/lib/python3.12/site-packages/torch/profiler/profiler.py(1128): start',
      'torch/autograd/profiler.py(700): __exit__',
      '<flagprof-site>(12): site_index',
      // A multiprocessing child's bootstrap, below the code it runs (the OWLv2 trace's top five frames).
      '<string>(1): <module>',
      'multiprocessing/spawn.py(122): spawn_main',
      '/usr/lib/python3.10/multiprocessing/process.py(314): _bootstrap',
    ])
      expect(isProfilerFrameName(name), name).toBe(true);
    for (const name of [
      `${USER}(16): forward`,
      '/home/user/proj/runpy_tools.py(3): run',
      '/home/user/my_torch/profiler.py(3): run',
      '/home/user/proj/multiprocessing/pool_tools.py(3): run',
      'torch/nn/modules/module.py(1501): _call_impl',
      '<built-in method tanh of type object at 0x7f82f8acea40>',
    ])
      expect(isProfilerFrameName(name), name).toBe(false);
    expect(isProfilerFile(USER)).toBe(false);
  });

  it('take no lane; what they enclose moves up a lane for each, and nothing else is lost', () => {
    const { lane, depth } = lanesOf(payload);
    for (let i = 0; i < payload.header.sliceCount; i++) {
      const isHidden = c.profilerFrames.includes(i);
      expect(lane[i] < 0, `slice ${i}`).toBe(isHidden);
    }
    expect(depth[slices.module]).toBe(0);
    expect(depth[slices.forward]).toBe(1);
    // The trampoline between forward() and its op is hidden too.
    expect(depth[slices.matmul]).toBe(2);
    expect(depth[slices.launch]).toBe(3);
    expect(depth[slices.json]).toBe(0);
    expect(depth[slices.otherChild]).toBe(0);
    expect(depth[slices.add]).toBe(1);
    expect(depth[slices.other]).toBe(0);
    // The slices' own depths travel unchanged, for the view with every frame.
    expect(c.depth[slices.matmul]).toBe(6);
    expect(payload.header.tracks.map((t) => t.maxDepth)).toEqual([3, 1, 0]);
  });

  it("names the kernel's line as the one attribution does: the call site, with its column", () => {
    const op = c.opOf[slices.kernel];
    expect(op).toBe(slices.matmul);
    expect(c.site[slices.kernel]).toBe(analysis.lineOf[slices.matmul]);
    expect(c.site[slices.launch]).toBe(analysis.lineOf[slices.matmul]);
    const line = payload.header.tables.lines[c.site[slices.kernel]];
    expect(line).toMatchObject({ file: USER, line: 40, column: 12, function: 'forward' });
    expect(line.kind).toBeUndefined();
  });

  it("marks the lines in the profiler's own files, for the Lines table to hide with the frames", () => {
    // An imported trace from Python on Windows: no call sites, and a runpy the attribution takes for user code.
    const imported = new Profile('trace.json');
    const s = imported.strings;
    imported.tracks.push({ ...profile.tracks[0], sliceCount: 0, maxDepth: 0 });
    const py = s.intern('python_function');
    const push = (kind: SliceKind, start: number, dur: number, name: string, cat: number, ext = NaN) =>
      imported.slices.push(kind, 0, start, dur, s.intern(name), cat, NaN, ext, -1);
    push(SliceKind.PythonFunction, 0, 1_000, 'C:\\Python310\\Lib\\runpy.py(86): _run_code', py);
    push(SliceKind.PythonFunction, 10, 900, 'C:\\work\\train.py(3): step', py);
    push(SliceKind.CpuOp, 20, 100, 'aten::add', s.intern('cpu_op'), 1);
    imported.eventCount = imported.slices.length;
    reindex(imported);
    const encoded = encodeTimeline(imported, analyze(imported));
    const lines = encoded.header.tables.lines;
    expect(lines.map((l) => l.file).sort()).toEqual(['C:\\Python310\\Lib\\runpy.py', 'C:\\work\\train.py']);
    expect(encoded.header.profilerLines.map((index) => lines[index].file)).toEqual([
      'C:\\Python310\\Lib\\runpy.py',
    ]);
    expect(Array.from(encoded.columns.profilerFrames)).toEqual([0]);
  });

  it('are shown by the webview at their own depths when asked, and hidden again', () => {
    const model = new TimelineModel(unpackTimeline(packTimeline(payload)));
    expect(model.profilerFrameCount).toBe(hidden.length);
    expect(model.profilerFramesShown).toBe(false);
    expect(model.laneOfSlice[slices.agentMain]).toBe(-1);
    expect(model.laneOf(slices.matmul)?.depth).toBe(2);
    expect(parentOf(model, slices.module)).toBe(-1);
    expect(parentOf(model, slices.matmul)).toBe(slices.forward);
    // Search and the tables find nothing hidden.
    const found = (text: string) => {
      const result = model.search(text, false);
      return 'error' in result ? [] : Array.from(result.matches);
    };
    expect(found('runpy')).toEqual([]);
    expect(model.longest((i) => c.kind[i] === SliceKind.PythonFunction)).toBe(slices.module);

    model.showProfilerFrames(true);
    expect(model.profilerFramesShown).toBe(true);
    for (let i = 0; i < model.sliceCount; i++) {
      const lane = model.laneOf(i);
      expect(lane, `slice ${i}`).toBeDefined();
      expect(lane!.depth).toBe(c.depth[i]);
      expect(lane!.track.id).toBe(c.track[i]);
      expect(lane!.order).toContain(i);
    }
    expect(parentOf(model, slices.module)).toBe(slices.agentMain);
    expect(parentOf(model, slices.matmul)).toBe(slices.site);
    expect(found('runpy')).toEqual([slices.runModule, slices.runCode, slices.otherRunpy]);
    expect(model.longest((i) => c.kind[i] === SliceKind.PythonFunction)).toBe(slices.runModule);

    model.showProfilerFrames(false);
    expect(model.laneOfSlice[slices.agentMain]).toBe(-1);
    expect(model.laneOf(slices.matmul)?.depth).toBe(2);
  });
});
