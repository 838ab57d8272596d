/**
 * The device-time checks on an agent-mode session without the Kineto plugin: its device events carry no torch
 * correlation id, so P4/K6 judge the enclosure link the analysis made, P3 shows the absent External id as the
 * mode's difference, and a failure's hint speaks of enclosure, never of getLinkedActivity(). A script that registers
 * a PrivateUse1 device with no profiler of its own gets the adaptor registered for it (ids only): External ids.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BIN, buildCli, makeTempDir } from '../helpers/cli';
import { PYTHON, ROOT, ensureFakeCupti, ensureNativeBuilt } from '../helpers/native';

const SCRIPT = path.join(ROOT, 'test', 'fixtures', 'scripts', 'agent_mm_launch.py');
const temp = makeTempDir('agent-checks');
afterAll(() => temp.remove());
beforeAll(() => {
  ensureNativeBuilt();
  buildCli();
});

interface Result {
  id: string;
  status: string;
  summary: string;
  hint?: string;
}

function profileAndCheck(name: string, args: string[] = []): Record<string, Result> {
  const out = path.join(temp.dir, name);
  // The Kineto plugin (for --backend) is built into a cache of the test's own: the build is part of what runs.
  const env = {
    ...process.env,
    FLAGOS_TRACER_LIBRARY: ensureFakeCupti(),
    FLAGPROF_CACHE: path.join(temp.dir, 'cache'),
  };
  const run = spawnSync(
    process.execPath,
    [BIN, 'profile', '--mode', 'agent', '--python', PYTHON, '--out', out, '--', SCRIPT, ...args],
    { encoding: 'utf8', env, timeout: 180_000 },
  );
  expect(run.status, run.stderr).toBe(0);
  const check = spawnSync(process.execPath, [BIN, 'check', out, '--json'], { encoding: 'utf8' });
  const report = JSON.parse(check.stdout) as { results: Result[] };
  const results = Object.fromEntries(report.results.map((r) => [r.id, r]));
  // A failure names what the run said (its notes: why torch's ids did or did not reach the tracer).
  const notes = (JSON.parse(readFileSync(path.join(out, 'session.json'), 'utf8')) as { notes: string[] })
    .notes;
  expect(results.X3, `no X3; notes: ${notes.join(' | ')}; stderr: ${run.stderr.slice(-800)}`).toBeDefined();
  return results;
}

describe('device-time checks in agent mode without torch correlation ids', () => {
  it('pass on enclosure links: aten::mm owns its 5 GEMMs of 20 µs', () => {
    const r = profileAndCheck('inside');
    expect(r.P4).toMatchObject({
      status: 'pass',
      summary: 'aten::mm: 100 µs self device time = Σ of 5 device events linked by enclosure',
    });
    expect(r.K6).toMatchObject({
      status: 'pass',
      summary: 'aten::mm: 100 µs = Σ of 5 device events linked by enclosure',
    });
    expect(r.P3.status).toBe('info');
    expect(r.P3.summary).toBe('kernel lacks External id; cuda_runtime lacks External id');
    expect(r.X3.summary).toMatch(/5 of 5 device events reach a CPU op \(0 by External id, 5 by enclosure\)/);
  }, 240_000);

  it('when the launches happen outside aten::mm, the hint speaks of enclosure, not of getLinkedActivity', () => {
    const r = profileAndCheck('outside', ['--outside']);
    expect(r.P4.status).toBe('fail');
    expect(r.P4.hint).toMatch(/charged to the innermost op running when its runtime call was made/);
    expect(r.P4.hint).not.toMatch(/getLinkedActivity/);
  }, 240_000);
});

describe('agent mode when the script registers a PrivateUse1 device without a profiler of its own', () => {
  it('registers the adaptor for it: torch’s correlation ids reach the tracer, every check passes by External id', () => {
    const r = profileAndCheck('backend', ['--backend', 'fakedev']);
    expect(r.X3.summary).toMatch(/5 of 5 device events reach a CPU op \(5 by External id, 0 by enclosure\)/);
    expect(r.P3.status).toBe('pass');
    expect(r.P4).toMatchObject({
      status: 'pass',
      summary: 'aten::mm: 100 µs self device time = Σ of 5 linked device events',
    });
    expect(r.K6.status).toBe('pass');
    const session = JSON.parse(readFileSync(path.join(temp.dir, 'backend', 'session.json'), 'utf8')) as {
      activities: string[];
      torchIds?: { device: string };
      mode: { chosen: string };
    };
    expect(session.mode.chosen).toBe('agent');
    expect(session.activities).toContain('PrivateUse1:fakedev');
    expect(session.torchIds?.device).toBe('fakedev');
  }, 300_000);
});
