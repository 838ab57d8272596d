/**
 * "Run Parity Workload" without VS Code: the workload written for a device, profiled by the real capture agent in
 * the project's Python (torch 2.13 CPU), then checked. On a CPU-only machine the session's mode is cpu, so the
 * device checks are skipped with that reason and the CPU side passes.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadBringup } from '../../extension/bringup/load';
import { parityWorkloadSource, startParityRun, validDevice } from '../../extension/bringup/parity';

import { ROOT } from '../helpers/paths';
const PYTHON = path.join(ROOT, '.venv/bin/python');
const dir = mkdtempSync(path.join(tmpdir(), 'flagprof-parity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('parity workload', () => {
  it('is the parity workload of torch_fl profiler.md §5 for the chosen device', () => {
    const source = parityWorkloadSource('flagos');
    expect(source).toContain('DEVICE = "flagos"\nif "--device" in sys.argv[1:-1]:');
    expect(source).toContain('for _ in range(5):\n    z = (x @ y).relu()');
    expect(source).toContain('torch.randn(1024, 1024, device=DEVICE)');
    expect(source).toContain('torch.randn(16, device=DEVICE)');
    expect(source).toContain('total = z.sum().item()');
    expect(validDevice('flagos:0')).toBe(true);
    expect(() => parityWorkloadSource('cuda; rm -rf /')).toThrow(/not a torch device name/);
  });

  it('runs on cpu through the capture agent and gets checked', async () => {
    expect(existsSync(PYTHON), `${PYTHON} is missing: run scripts/setup-python.sh`).toBe(true);
    let stdout = '';
    const run = startParityRun({
      device: 'cpu',
      folder: dir,
      python: PYTHON,
      stdout: (chunk) => (stdout += chunk.toString()),
      stderr: () => {},
    });
    const result = await run.done;
    expect(result.exitCode).toBe(0);
    expect(stdout).toMatch(/parity workload on cpu: sum=/);
    expect(readFileSync(path.join(dir, 'flagos_parity_workload.py'), 'utf8')).toBe(
      parityWorkloadSource('cpu'),
    );
    const model = await loadBringup(result.sessionDir);
    expect(model.header.torch).toMatch(/^2\.13/);
    const checks = model.checks!;
    const byId = Object.fromEntries(checks.results.map((r) => [r.id, r]));
    expect(byId.X1.status).toBe('pass');
    expect(byId.K1.status).toBe('pass');
    expect(model.header.mode).toBe('cpu');
    expect(byId.P1).toMatchObject({ status: 'skip' });
    expect(byId.P1.summary).toMatch(/^CPU-only capture: mode cpu/);
    expect(checks.totals.requiredFailed).toBe(0);
  }, 120_000);

  it('stops with a clear message when the device is not there', async () => {
    let stderr = '';
    const run = startParityRun({
      device: 'nosuchdevice',
      folder: path.join(dir, 'missing'),
      python: PYTHON,
      stdout: () => {},
      stderr: (c) => (stderr += c.toString()),
    });
    const result = await run.done;
    expect(result.exitCode).toBe(1);
    expect(stderr).toContain(
      "device 'nosuchdevice' is not available: this torch's PrivateUse1 backend is 'privateuseone'",
    );
  }, 120_000);
});
