/**
 * The profiler's own Python frames: what runs the user's script under the profiler (the capture agent, runpy)
 * and the profiler's own calls (torch.profiler, the agent's call-site trampolines). A session's CPU thread starts
 * with half a dozen of them above the user's `<module>`; the timeline hides them by default and draws what they
 * enclose that many lanes higher, so nothing under them is lost.
 */
import { SliceKind, type Profile } from '../model/profile';

/** A python_function event's name: `file(line): function`. */
const FRAME_NAME = /^(.*)\(\d+\): /s;

/**
 * Files of the profiler itself, in a path with either separator, and of what starts the process that runs the
 * profiled code: runpy, and a multiprocessing child's bootstrap (`python -c "from multiprocessing.spawn import
 * spawn_main; …"` is the `<string>` at the bottom of its stack).
 */
const PROFILER_FILES = [
  /(^|\/)flagprof_agent\//,
  /(^|\/)runpy\.py$/,
  /^<frozen runpy>$/,
  /(^|\/)multiprocessing\/(spawn|process|popen_fork|popen_forkserver|forkserver)\.py$/,
  /^<string>$/,
  /(^|\/)torch\/profiler\//,
  /(^|\/)torch\/autograd\/profiler\.py$/,
  /^<flagprof-site/,
  // A torchrun worker starts under the agent from the sitecustomize on its PYTHONPATH (flagprof_agent/ranks_boot),
  // which Python's startup (site) imports: the whole run sits under those frames.
  /^<frozen site>$/,
  /(^|\/)sitecustomize\.py$/,
];

/**
 * The import machinery's frames: the profiler's when what imports is the profiler (site importing the agent's
 * sitecustomize), the user's when the user's code imports (an import's cost is worth seeing).
 */
const IMPORT_FILE = /^<frozen importlib\._bootstrap(_external)?>$/;

/** Whether `file` (a path as a trace or a call site names it) is part of the profiler rather than the user's code. */
export function isProfilerFile(file: string): boolean {
  const path = file.replace(/\\/g, '/');
  return PROFILER_FILES.some((pattern) => pattern.test(path));
}

function frameVerdict(name: string): number {
  if (isProfilerFrameName(name)) return 1;
  const match = FRAME_NAME.exec(name);
  return IMPORT_FILE.test(match ? match[1] : name) ? 3 : 2;
}

/** Whether a python_function event of this name is a frame of the profiler. */
export function isProfilerFrameName(name: string): boolean {
  const match = FRAME_NAME.exec(name);
  return isProfilerFile(match ? match[1] : name);
}

export interface ProfilerFrames {
  /** The profiler's frames, ascending slice indices. */
  frames: Int32Array;
  /** Per slice, when there are frames: 1 for a profiler frame. */
  mask: Uint8Array | undefined;
  /** Per slice: its depth with the profiler frames above it taken out (the slices' own when there are none). */
  depth: Uint16Array;
}

/** Finds the profiler's frames (each distinct name tested once) and the depth of every slice without them. */
export function profilerFrames(profile: Profile): ProfilerFrames {
  const { kind, name, depth, parent, length: n } = profile.slices;
  const ownDepth = depth.subarray(0, n);
  // Per string id: 0 untested, 1 a profiler frame, 2 not.
  // Per string id: 0 untested, 1 a profiler frame, 2 not, 3 an import frame (the profiler's if its importer is).
  const verdict = new Uint8Array(profile.strings.size);
  let mask: Uint8Array | undefined;
  let count = 0;
  let imports = false;
  for (let i = 0; i < n; i++) {
    if (kind[i] !== SliceKind.PythonFunction) continue;
    const id = name[i];
    if (verdict[id] === 0) verdict[id] = frameVerdict(profile.strings.get(id));
    if (verdict[id] === 3) imports = true;
    if (verdict[id] !== 1) continue;
    mask ??= new Uint8Array(n);
    mask[i] = 1;
    count++;
  }
  if (mask && imports) {
    for (let i = 0; i < n; i++) {
      if (kind[i] !== SliceKind.PythonFunction || verdict[name[i]] !== 3) continue;
      // Up through the import machinery to whoever imports: a profiler frame makes the whole chain its own.
      let p = parent[i];
      while (p >= 0 && kind[p] === SliceKind.PythonFunction && verdict[name[p]] === 3) p = parent[p];
      if (p >= 0 && mask[p] && !mask[i]) {
        for (let j = i; j !== p; j = parent[j]) {
          if (mask[j]) break;
          mask[j] = 1;
          count++;
        }
      }
    }
  }
  if (!mask) return { frames: new Int32Array(0), mask: undefined, depth: ownDepth };
  const frames = new Int32Array(count);
  for (let i = 0, k = 0; i < n; i++) if (mask[i]) frames[k++] = i;
  return { frames, mask, depth: depthWithout(mask, parent, ownDepth) };
}

/** Each slice's depth less the masked slices among its ancestors, walking each parent chain once. */
function depthWithout(mask: Uint8Array, parent: Int32Array, depth: Uint16Array): Uint16Array {
  const n = depth.length;
  // Per slice: masked ancestors, filled top-down along each chain not walked yet.
  const above = new Uint16Array(n);
  const done = new Uint8Array(n);
  const chain: number[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = i; j >= 0 && !done[j]; j = parent[j]) chain.push(j);
    while (chain.length > 0) {
      const s = chain.pop()!;
      const p = parent[s];
      above[s] = p >= 0 ? above[p] + mask[p] : 0;
      done[s] = 1;
    }
  }
  const visible = new Uint16Array(n);
  for (let i = 0; i < n; i++) visible[i] = Math.max(0, depth[i] - above[i]);
  return visible;
}
