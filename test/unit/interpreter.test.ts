import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  findInterpreter,
  interpreterCandidates,
  InterpreterError,
  probeInterpreter,
  workspaceInterpreters,
} from '../../extension/capture/interpreter';
import { ROOT } from '../helpers/paths';

/** A folder holding an executable `name` (a shell script: only its being executable matters here). */
function executable(dir: string, name: string): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  writeFileSync(file, '#!/bin/sh\nexit 0\n');
  chmodSync(file, 0o755);
  return file;
}

function workspace(): { root: string; venv: string; conda: string; bin: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'flagprof-interp-'));
  return {
    root,
    venv: executable(path.join(root, '.venv', 'bin'), 'python3'),
    conda: executable(path.join(root, '.conda', 'bin'), 'python'),
    bin: executable(path.join(root, 'somewhere', 'bin'), 'python3'),
  };
}

describe('interpreter discovery without the Python extension', () => {
  it("finds the workspace's own environments, .venv before .conda", () => {
    const ws = workspace();
    expect(workspaceInterpreters([ws.root])).toEqual([ws.venv, ws.conda]);
    expect(workspaceInterpreters([path.join(ws.root, 'somewhere')])).toEqual([]);
  });

  it('orders the setting, the Python extension, the workspace, python.defaultInterpreterPath, then PATH, each once', async () => {
    const ws = workspace();
    const extension = executable(path.join(ws.root, 'ext', 'bin'), 'python');
    const fallback = executable(path.join(ws.root, 'fallback', 'bin'), 'python');
    const candidates = await interpreterCandidates({
      configured: ws.venv,
      fromPythonExtension: () => Promise.resolve(extension),
      workspaceFolders: [ws.root],
      defaultInterpreterPath: fallback,
      envPath: path.dirname(ws.bin),
    });
    expect(candidates).toEqual([
      { path: ws.venv, source: 'setting' },
      { path: extension, source: 'python-extension' },
      // .venv is the setting already: listed once, as the setting.
      { path: ws.conda, source: 'workspace' },
      { path: fallback, source: 'default-interpreter-path' },
      { path: ws.bin, source: 'path' },
    ]);
  });

  it("with nothing configured, the workspace's .venv wins over PATH; the Python extension failing is no error", async () => {
    const ws = workspace();
    const found = await findInterpreter({
      fromPythonExtension: () => Promise.reject(new Error('no extension')),
      workspaceFolders: [ws.root],
      defaultInterpreterPath: 'python',
      envPath: path.dirname(ws.bin),
    });
    expect(found).toEqual({ path: ws.venv, source: 'workspace' });
  });

  it('a configured interpreter that does not exist is an error that says what to do', async () => {
    const ws = workspace();
    const error = await findInterpreter({
      configured: path.join(ws.root, 'nope', 'python'),
      workspaceFolders: [ws.root],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterpreterError);
    expect((error as InterpreterError).message).toContain('was not found or is not executable');
    expect((error as InterpreterError).fix).toContain('flagos.pythonPath');
  });

  it('nothing anywhere: one error naming every place looked at', async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'flagprof-interp-'));
    const error = await findInterpreter({ workspaceFolders: [empty], envPath: empty }).catch(
      (e: unknown) => e,
    );
    expect((error as InterpreterError).message).toMatch(/\.venv, venv, \.conda or env.*PATH/);
  });

  it("a real workspace environment is probed for torch without importing it (the project's own .venv)", async () => {
    const [candidate] = await interpreterCandidates({ workspaceFolders: [ROOT], envPath: '' });
    expect(candidate.source).toBe('workspace');
    expect(path.dirname(path.dirname(candidate.path))).toBe(path.join(ROOT, '.venv'));
    const info = await probeInterpreter(candidate.path);
    expect(info.version).toMatch(/^3\.\d+\.\d+$/);
    expect(info.torch).toMatch(/^2\./);
  });
});
