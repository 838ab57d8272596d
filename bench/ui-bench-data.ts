/** Node side of the UI benchmark: the packed timeline payloads it feeds the page, and the host's encode time. */
import { analyze } from '../extension/analysis/analyze';
import type { Analysis } from '../extension/analysis/types';
import { importTrace } from '../extension/import/kineto';
import type { Profile } from '../extension/model/profile';
import { packTimeline } from '../extension/protocol';
import { encodeTimeline } from '../extension/timeline/encode';
import { syntheticProfile } from '../test/fixtures/synthetic-profile';

export interface BenchPayload {
  buffer: ArrayBuffer;
  slices: number;
  /** encodeTimeline + packTimeline: what the extension host spends before posting the profile. */
  encodeMs: number;
}

function encode(profile: Profile, analysis: Analysis): BenchPayload {
  const t0 = performance.now();
  const buffer = packTimeline(encodeTimeline(profile, analysis));
  return { buffer, slices: profile.slices.length, encodeMs: performance.now() - t0 };
}

export function syntheticPayload(slices: number): BenchPayload {
  const { profile, analysis } = syntheticProfile({ slices, threads: 8, streams: 8 });
  return encode(profile, analysis);
}

export async function tracePayload(file: string): Promise<BenchPayload> {
  const profile = await importTrace(file);
  return encode(profile, analyze(profile));
}
