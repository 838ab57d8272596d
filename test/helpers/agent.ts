/** Shared by the capture agent's integration tests: the real interpreter, the fixtures, one capture at a time. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  startCapture,
  type CaptureOptions,
  type CaptureResult,
  type CaptureRun,
  type ProgressEvent,
} from '../../extension/capture/launcher';

import { PYTHON, ROOT } from './paths';

export { PYTHON, ROOT };
export const SCRIPTS = path.join(ROOT, 'test', 'fixtures', 'scripts');

export function requirePython(): void {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run scripts/setup-python.sh first`);
}

export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `flagprof-${prefix}-`));
}

export interface Captured {
  result: CaptureResult;
  stdout: string;
  stderr: string;
  progress: ProgressEvent[];
  dir: string;
}

export function launch(
  script: string,
  options: Partial<CaptureOptions> = {},
  onRun?: (run: CaptureRun, output: { stdout: () => string }) => void,
): Promise<Captured> {
  const dir = options.sessionDir ?? path.join(tempDir('session'), 'session');
  let stdout = '';
  let stderr = '';
  const progress: ProgressEvent[] = [];
  const run = startCapture({
    python: PYTHON,
    script: path.isAbsolute(script) ? script : path.join(SCRIPTS, script),
    sessionDir: dir,
    mode: 'cpu',
    ...options,
    stdout: (chunk) => (stdout += chunk.toString('utf8')),
    stderr: (chunk) => (stderr += chunk.toString('utf8')),
    onProgress: (event) => progress.push(event),
  });
  onRun?.(run, { stdout: () => stdout });
  return run.done.then((result) => ({ result, stdout, stderr, progress, dir }));
}

export function readJson<T = Record<string, unknown>>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

/** An interpreter without torch: the system one when it lacks torch, else a fresh empty venv. */
export function pythonWithoutTorch(): string {
  for (const candidate of ['/usr/bin/python3', '/usr/local/bin/python3']) {
    if (!existsSync(candidate)) continue;
    try {
      execFileSync(candidate, [
        '-c',
        'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("torch") is None else 1)',
      ]);
      return candidate;
    } catch {
      // has torch (or is broken): try the next one
    }
  }
  const venv = path.join(tempDir('venv'), 'empty');
  execFileSync(PYTHON, ['-m', 'venv', '--without-pip', venv]);
  return path.join(venv, 'bin', 'python');
}
