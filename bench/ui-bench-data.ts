/** Node side of the UI benchmark: the packed timeline payloads it feeds the page, and the host's encode time. */
import { analyze } from '../extension/analysis/analyze';
import type { Analysis } from '../extension/analysis/types';
import { reindex } from '../extension/import/finish';
import { importTrace } from '../extension/import/kineto';
import { SliceKind, type Profile } from '../extension/model/profile';
import { packTimeline } from '../extension/protocol';
import { encodeTimeline } from '../extension/timeline/encode';
import { syntheticProfile } from '../test/fixtures/synthetic-profile';

export interface BenchPayload {
  buffer: ArrayBuffer;
  slices: number;
  /** encodeTimeline + packTimeline: what the extension host spends before posting the profile. */
  encodeMs: number;
  /** Reading and analysing the trace before that (0 for a profile made in memory): the rest of the host's part. */
  openMs: number;
}

function encode(profile: Profile, analysis: Analysis): BenchPayload {
  const t0 = performance.now();
  const buffer = packTimeline(encodeTimeline(profile, analysis));
  return { buffer, slices: profile.slices.length, encodeMs: performance.now() - t0, openMs: 0 };
}

export function syntheticPayload(slices: number): BenchPayload {
  const { profile, analysis } = syntheticProfile({ slices, threads: 8, streams: 8 });
  return encode(profile, analysis);
}

/**
 * The same profile as a Profile Current File session has it: every CPU thread's slices under runpy's and the
 * capture agent's frames, which the timeline hides (and shows again on request).
 */
export function sessionPayload(slices: number): BenchPayload {
  const { profile } = syntheticProfile({ slices, threads: 8, streams: 8 });
  const { start, dur, track, length: n } = profile.slices;
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    first.set(track[i], Math.min(first.get(track[i]) ?? Infinity, start[i]));
    last.set(track[i], Math.max(last.get(track[i]) ?? -Infinity, start[i] + dur[i]));
  }
  const s = profile.strings;
  const category = s.intern('python_function');
  const frames = [
    '<frozen runpy>(198): _run_module_as_main',
    '<frozen runpy>(88): _run_code',
    '/opt/venv/lib/python3.12/site-packages/flagprof_agent/__main__.py(483): main',
  ].map((name) => s.intern(name));
  for (const t of profile.tracks) {
    if (t.kind !== 'cpu' || !first.has(t.id)) continue;
    frames.forEach((name, k) => {
      const from = first.get(t.id)! - 3 + k;
      const to = last.get(t.id)! + 3 - k;
      profile.slices.push(SliceKind.PythonFunction, t.id, from, to - from, name, category, NaN, NaN, -1);
    });
  }
  profile.eventCount = profile.slices.length;
  reindex(profile);
  return encode(profile, analyze(profile));
}

export async function tracePayload(file: string): Promise<BenchPayload> {
  const t0 = performance.now();
  const profile = await importTrace(file);
  const analysis = analyze(profile);
  const openMs = performance.now() - t0;
  return { ...encode(profile, analysis), openMs };
}
