/**
 * The product's own agent through the checks: a torch CPU workload launching work through the fake CUPTI
 * library (test/fake-cupti), captured in agent mode by libflagprof_agent.so, loaded as a session (trace plus
 * capture.fpc) and checked. Agent mode is held to strict flow pairing even though its runtime category is
 * cuda_runtime.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BringupModel } from '../../extension/bringup/load';
import { loadBringup } from '../../extension/bringup/load';
import { ensureFakeCupti, ensureNativeBuilt, PYTHON, ROOT } from '../helpers/native';

let dir: string;
let model: BringupModel;

beforeAll(async () => {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run scripts/setup-python.sh first`);
  ensureNativeBuilt();
  dir = mkdtempSync(path.join(os.tmpdir(), 'flagprof-bringup-agent-'));
  const run = spawnSync(PYTHON, [path.join(ROOT, 'test/fake-cupti/workload.py'), dir, '--push-correlation'], {
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      ...process.env,
      PYTHONPATH: path.join(ROOT, 'native/agent/python'),
      FLAGOS_TRACER_LIBRARY: ensureFakeCupti(),
      FLAGOS_TRACE: '1',
    },
  });
  expect(run.status, run.stderr).toBe(0);
  // What the launcher writes around the agent: the session record and the captured stderr lines.
  writeFileSync(
    path.join(dir, 'session.json'),
    JSON.stringify({ mode: { chosen: 'agent', reason: 'the fake CUPTI library loaded' } }),
  );
  writeFileSync(
    path.join(dir, 'diagnostics.jsonl'),
    run.stderr
      .split('\n')
      .filter((l) => l.startsWith('[flagos'))
      .map((line) => JSON.stringify({ ts: 0, line }))
      .join('\n'),
  );
  model = await loadBringup(dir, { platform: 'other' });
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('agent-mode session with the fake CUPTI library', () => {
  it('merges the capture: the structural checks of the tracer pass', () => {
    const status = Object.fromEntries(model.checks!.results.map((r) => [r.id, r.status]));
    expect(status).toMatchObject({
      X1: 'pass',
      P1: 'pass',
      P2: 'pass',
      P5: 'pass',
      P6: 'pass',
      P7: 'pass',
      K2: 'pass',
      K4: 'pass',
      K5: 'pass',
      K10: 'pass',
      K11: 'pass',
      X2: 'pass',
      X3: 'pass',
    });
    const p2 = model.checks!.results.find((r) => r.id === 'P2')!;
    expect(p2.required).toBe(true);
  });

  it("lifts the agent's counts out of its FLAGOS_TRACE lines", () => {
    expect(model.header.library).toMatch(/libcupti_fake\.so$/);
    expect(model.summary.tracer).toBe('cupti');
    expect(model.summary.eventsDrained).toBeGreaterThan(0);
    expect(model.summary.enableResults).toMatchObject({ RUNTIME: 0, EXTERNAL_CORRELATION: 0 });
    expect(model.diagnostics.find((d) => d.component === 'agent' && d.code === 'A4')?.counts.external).toBe(
      5,
    );
  });
});
