/**
 * `flagprof profile -- -m package.module`: the module runs as `python -m` runs it (sys.argv[0] its file, the
 * current directory on sys.path), with the script's durability and exact call sites. Real torch, the small
 * package test/fixtures/launch/lpkg.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProfile } from '../../extension/capture/open';
import type { Profile } from '../../extension/model/profile';
import { isOpKind } from '../../extension/shared/kinds';
import { launchForm } from '../../extension/cli/profile';
import { readJson, requirePython, tempDir } from '../helpers/agent';
import { buildCli, cleanupCliRuns, runCli } from '../helpers/cli';
import { PYTHON, ROOT } from '../helpers/paths';

const LAUNCH = path.join(ROOT, 'test', 'fixtures', 'launch');
const PKG = path.join(LAUNCH, 'lpkg');
const TIMEOUT = 300_000;

/** The 1-based line of the fixture's source that holds `text`. */
function lineOf(file: string, text: string): number {
  const index = readFileSync(file, 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(text));
  if (index < 0) throw new Error(`${text} is not in ${file}`);
  return index + 1;
}

/** The ops whose innermost call site is exactly file:line. */
function opsAt(profile: Profile, file: string, line: number): string[] {
  const names: string[] = [];
  for (let i = 0; i < profile.slices.length; i++) {
    if (!isOpKind(profile.slices.kind[i])) continue;
    const innermost = profile.sites?.get(profile.slices.externalId[i])?.[0];
    if (innermost && innermost.file === file && innermost.line === line && innermost.kind === undefined)
      names.push(profile.nameOf(i));
  }
  return names;
}

function profileIn(out: string, args: string[]) {
  return runCli(['profile', '--out', out, '--python', PYTHON, '--mode', 'cpu', ...args], {
    cwd: LAUNCH,
    timeoutMs: TIMEOUT,
  });
}

beforeAll(() => {
  requirePython();
  buildCli();
});
afterAll(cleanupCliRuns);

describe('the launch form of a command', () => {
  it('tells a script, a module, python -m and torchrun apart', () => {
    expect(launchForm('train.py', ['--x'])).toMatchObject({ module: undefined, args: ['--x'], ranks: false });
    expect(launchForm('-m', ['lpkg.train', '--steps', '2'])).toMatchObject({
      module: 'lpkg.train',
      scriptPath: undefined,
      args: ['--steps', '2'],
    });
    expect(launchForm('python3', ['-m', 'lpkg'])).toMatchObject({ module: 'lpkg', ranks: false });
    const torchrun = launchForm('torchrun', ['--nproc-per-node', '2', 'ddp_gloo.py', '--steps', '3']);
    expect(torchrun).toMatchObject({ module: 'torch.distributed.run', ranks: true });
    expect(torchrun.scriptPath).toBe(path.resolve('ddp_gloo.py'));
    expect(launchForm('python', ['-m', 'torch.distributed.run', 'a.py']).ranks).toBe(true);
  });
});

describe('flagprof profile -- -m module', () => {
  it(
    'runs the module as python -m does and puts its ops on the exact lines of the package',
    async () => {
      const out = path.join(tempDir('module'), 'session');
      const run = await profileIn(out, ['--', '-m', 'lpkg.train', '--steps', '2']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain("argv0 train.py args ['--steps', '2'] cwd-on-path True");
      const record = readJson(path.join(out, 'session.json'));
      expect(record).toMatchObject({
        module: 'lpkg.train',
        script: path.join(PKG, 'train.py'),
        status: 'completed',
      });
      expect(record.command).toEqual([PYTHON, '-m', 'lpkg.train', '--steps', '2']);
      const { profile } = await openProfile(out);
      const model = path.join(PKG, 'model.py');
      expect(opsAt(profile, model, lineOf(model, 'torch.matmul'))).toContain('aten::matmul');
      const train = path.join(PKG, 'train.py');
      expect(opsAt(profile, train, lineOf(train, 'torch.tanh'))).toContain('aten::tanh');
    },
    TIMEOUT,
  );

  it(
    'runs a package by its __main__ with -m before the script words (no --)',
    async () => {
      const out = path.join(tempDir('package'), 'session');
      const run = await profileIn(out, ['-m', 'lpkg']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('package main 32768.0');
      const main = path.join(PKG, '__main__.py');
      expect(readJson(path.join(out, 'session.json'))).toMatchObject({ module: 'lpkg', script: main });
      const { profile } = await openProfile(out);
      expect(opsAt(profile, main, lineOf(main, 'torch.mm'))).toContain('aten::mm');
    },
    TIMEOUT,
  );

  it(
    'runs `python -m module` with the profiled interpreter',
    async () => {
      const out = path.join(tempDir('python-m'), 'session');
      const run = await profileIn(out, ['--', 'python', '-m', 'lpkg.train', '--steps', '1']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain("args ['--steps', '1']");
      expect(readJson(path.join(out, 'session.json'))).toMatchObject({ module: 'lpkg.train' });
    },
    TIMEOUT,
  );

  it(
    'says, as Python does, that a module is missing, exit code 1',
    async () => {
      const out = path.join(tempDir('missing'), 'session');
      const run = await profileIn(out, ['--', '-m', 'lpkg_missing']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('No module named lpkg_missing');
      expect(readJson(path.join(out, 'session.json'))).toMatchObject({ status: 'error', exitCode: 1 });
    },
    TIMEOUT,
  );
});
