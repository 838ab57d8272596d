/**
 * Shared by the capture tests of every vendor: captures written to a temporary folder and decoded with their
 * metadata, agent-mode workloads run against a fake vendor library, and the checks every vendor's agent-mode
 * capture must pass the same way (flows paired on the vendor correlation id, events inside the capture window,
 * every line the agent recorded known to the bring-up view).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import type { Analysis } from '../../extension/analysis/types';
import { parseLine } from '../../extension/bringup/diagnostics';
import { loadAddon, type DecodedCapture } from '../../extension/import/addon';
import { mergeCapture } from '../../extension/import/capture';
import { importTrace } from '../../extension/import/kineto';
import { FlowPhase, type Profile, SliceKind, isDeviceKind } from '../../extension/model/profile';
import { PYTHON, ROOT } from './native';

/** Writes captures (header and frames) to numbered files in one temporary folder. */
export function captureWriter(prefix: string): (parts: Buffer[]) => string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `flagprof-${prefix}-`));
  let counter = 0;
  return (parts) => {
    const file = path.join(dir, `c${counter++}.fpc`);
    writeFileSync(file, Buffer.concat(parts));
    return file;
  };
}

export function decodeWithArgs(file: string): DecodedCapture {
  return loadAddon().decodeCapture(file, { args: true });
}

/** Event i's metadata as the addon wrote it. */
export function argsAt(c: DecodedCapture, i: number): Record<string, unknown> {
  const a = c.args!;
  return JSON.parse(Buffer.from(a.bytes.subarray(a.offsets[i], a.offsets[i + 1])).toString('utf8')) as Record<
    string,
    unknown
  >;
}

export interface WorkloadRun {
  dir: string;
  stdout: string;
  stderr: string;
  status: number | null;
}

/** Runs an agent-mode workload (SESSION_DIR [args]) with FLAGOS_TRACER_LIBRARY set to a fake vendor library. */
export function runAgentWorkload(
  workload: string,
  library: string,
  env: Record<string, string>,
  args: string[] = [],
): WorkloadRun {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flagprof-workload-'));
  const run = spawnSync(PYTHON, [workload, dir, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      ...process.env,
      PYTHONPATH: path.join(ROOT, 'native', 'agent', 'python'),
      FLAGOS_TRACER_LIBRARY: library,
      ...env,
    },
  });
  return { dir, stdout: run.stdout, stderr: run.stderr, status: run.status };
}

export interface AgentSession {
  profile: Profile;
  analysis: Analysis;
  capture: DecodedCapture;
}

/** A workload run's Kineto trace with its capture merged in, analysed, and the capture decoded with metadata. */
export async function openAgentSession(dir: string): Promise<AgentSession> {
  const profile = await importTrace(path.join(dir, 'trace.json'));
  mergeCapture(profile, path.join(dir, 'capture.fpc'));
  return { profile, analysis: analyze(profile), capture: decodeWithArgs(path.join(dir, 'capture.fpc')) };
}

export function deviceSlices(p: Profile): number[] {
  const out: number[] = [];
  for (let i = 0; i < p.slices.length; i++) if (isDeviceKind(p.slices.kind[i])) out.push(i);
  return out;
}

/** Every device event has its launch flow, each end on the right kind of slice, keyed on the correlation id. */
export function expectFlowsPaired(profile: Profile, analysis: Analysis): void {
  const devices = deviceSlices(profile);
  expect(analysis.flows.byCategory.ac2g).toEqual({ paired: devices.length, startOnly: 0, finishOnly: 0 });
  const { flows } = profile;
  for (let f = 0; f < flows.length; f++) {
    if (profile.strings.get(flows.cat[f]) !== 'ac2g') continue;
    const slice = flows.slice[f];
    expect(slice).toBeGreaterThanOrEqual(0);
    expect(String(profile.slices.correlation[slice])).toBe(profile.strings.get(flows.id[f]));
    expect(
      flows.phase[f] === FlowPhase.Start
        ? profile.slices.kind[slice] === SliceKind.Runtime
        : isDeviceKind(profile.slices.kind[slice]),
    ).toBe(true);
  }
}

/** Every device event and every runtime call of `runtimeCategory` lies inside the capture window; returns how
 * many there are. */
export function expectMergedInsideWindow(
  profile: Profile,
  capture: DecodedCapture,
  runtimeCategory: string,
): number {
  const lo = capture.windowStartNs!;
  const hi = capture.windowStopNs!;
  expect(hi > lo).toBe(true);
  let merged = 0;
  for (let i = 0; i < profile.slices.length; i++) {
    const kind = profile.slices.kind[i];
    if (!isDeviceKind(kind) && kind !== SliceKind.Runtime) continue;
    if (kind === SliceKind.Runtime && profile.categoryOf(i) !== runtimeCategory) continue;
    merged++;
    const start = profile.absoluteNs(profile.slices.start[i]);
    const end = profile.absoluteNs(profile.slices.start[i] + profile.slices.dur[i]);
    expect(start >= lo && end <= hi, `${profile.nameOf(i)} [${start}, ${end}] in [${lo}, ${hi}]`).toBe(true);
  }
  expect(profile.warnings.filter((w) => /fell outside the capture window/.test(w.message))).toEqual([]);
  return merged;
}

/** The bring-up view knows every line the agent recorded in the capture, under the code it was recorded with. */
export function expectRecordedLinesKnown(c: DecodedCapture): void {
  for (const d of c.diagnostics.filter((x) => x.fromCapture)) {
    const parsed = parseLine(d.message);
    expect(parsed.component, d.message).not.toBe('unknown');
    expect(parsed.code, d.message).toBe(d.code);
  }
}

export { buildCli } from './cli';

export interface CliEvent {
  kind: string;
  name: string;
  external_correlation_id: number | null;
  metadata: Record<string, unknown>;
}

/** `flagprof decode FILE`: the first line of its text, and the events of its --json form. */
export function cliDecode(file: string): { firstLine: string; events: CliEvent[] } {
  const cli = path.join(ROOT, 'dist', 'cli.js');
  const text = execFileSync(process.execPath, [cli, 'decode', file], { encoding: 'utf8' });
  const json = execFileSync(process.execPath, [cli, 'decode', file, '--json'], { encoding: 'utf8' });
  return { firstLine: text.split('\n')[0], events: (JSON.parse(json) as { events: CliEvent[] }).events };
}
