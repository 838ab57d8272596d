/**
 * The capture agent with a real interpreter and real torch: the script runs as `python script.py` would, its fate
 * is the exit code, the trace survives failures, and sites.json holds the true call-site lines.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { readSites } from '../../extension/import/sites';
import { openProfile } from '../../extension/capture/open';
import { readSessionFile } from '../../extension/capture/session';
import { launch, PYTHON, readJson, requirePython, SCRIPTS, tempDir } from '../helpers/agent';
import { ROOT } from '../helpers/paths';

beforeAll(() => requirePython());

describe('capture agent: running the script', () => {
  it("passes the arguments, the script folder as sys.path[0], the cwd and FLAGOS_TRACE=1; PYTHONPATH stays the user's", async () => {
    const cwd = tempDir('cwd');
    const { result, stdout, dir } = await launch('echo_args.py', {
      args: ['--epochs', '3', 'two words', ''],
      cwd,
      env: { ...process.env, PYTHONPATH: '' },
    });
    expect(result.exitCode).toBe(0);
    const seen = JSON.parse(stdout.trim().split('\n').pop() ?? '{}');
    expect(seen.argv).toEqual([path.join(SCRIPTS, 'echo_args.py'), '--epochs', '3', 'two words', '']);
    expect(seen.path0).toBe(SCRIPTS);
    expect(seen.cwd).toBe(cwd);
    expect(seen.name).toBe('__main__');
    expect(seen.flagos_trace).toBe('1');
    // Only the boot folder through which the script's own child processes (DataLoader workers) are profiled;
    // FLAGPROF_CHILDREN_OFF=1 leaves PYTHONPATH exactly the user's (below).
    expect(seen.pythonpath).toBe(
      path.join(ROOT, 'native', 'agent', 'python', 'flagprof_agent', 'ranks_boot'),
    );
    expect(seen.sum).toBe(4);
    const session = readJson(path.join(dir, 'session.json'));
    expect(session.exitCode).toBe(0);
    expect(session.status).toBe('completed');
    expect((session.torch as { version: string }).version).toMatch(/^2\./);
    expect((session.python as { executable: string }).executable).toBe(PYTHON);
    const alone = await launch('echo_args.py', {
      cwd,
      env: { ...process.env, PYTHONPATH: '', FLAGPROF_CHILDREN_OFF: '1' },
    });
    expect(JSON.parse(alone.stdout.trim().split('\n').pop() ?? '{}').pythonpath).toBeNull();
  });

  it('an exception mid-run: the traceback as Python prints it, exit 1, the trace kept', async () => {
    const { result, stderr, dir } = await launch('raise_midway.py');
    expect(result.exitCode).toBe(1);
    const script = path.join(SCRIPTS, 'raise_midway.py');
    // Exactly Python's shape: the script's frames only, none of the agent's or runpy's.
    expect(stderr).toContain(
      `Traceback (most recent call last):\n  File "${script}", line 15, in <module>\n    main()\n  File "${script}", line 12, in main\n`,
    );
    expect(stderr).toContain('ValueError: midway failure after 5 steps\n');
    expect(stderr).not.toContain('flagprof_agent');
    expect(stderr).not.toContain('runpy');
    expect(existsSync(path.join(dir, 'trace.json.gz'))).toBe(true);
    const profile = (await openProfile(dir)).profile;
    const names = new Set(Array.from({ length: profile.slices.length }, (_, i) => profile.nameOf(i)));
    expect(names.has('aten::tanh')).toBe(true);
    expect((profile.metadata.session as { status: string }).status).toBe('exception');
  });

  it("an error inside a torch call: Python's own traceback, none of the profiler's frames", async () => {
    const { result, stderr, dir } = await launch('torch_error.py');
    expect(result.exitCode).toBe(1);
    const script = path.join(SCRIPTS, 'torch_error.py');
    // Where in the user's code it was raised: the line that called torch, not torch's own frame.
    const exception = readSessionFile(dir)?.record.exception;
    expect(exception).toMatchObject({ type: 'RuntimeError', file: script, line: 6 });
    expect(exception?.message).toContain('shapes cannot be multiplied');
    const plain = spawnSync(PYTHON, [script], { encoding: 'utf8' });
    const traceback = (text: string): string =>
      text.slice(text.indexOf('Traceback (most recent call last):'));
    expect(traceback(plain.stderr)).toContain('F.linear(x, w)');
    expect(traceback(stderr)).toBe(traceback(plain.stderr));
    expect(stderr).not.toContain('flagprof');
  });

  it('sys.exit(3) exits 3 and still writes the profile', async () => {
    const { result, dir } = await launch('exit_three.py');
    expect(result.exitCode).toBe(3);
    expect(existsSync(path.join(dir, 'trace.json.gz'))).toBe(true);
    expect(readJson(path.join(dir, 'session.json')).exitCode).toBe(3);
  });

  it("a script importing a sibling module works from another cwd, and the sibling's line is a call site", async () => {
    const { result, stdout, dir } = await launch('uses_sibling.py', { cwd: tempDir('cwd') });
    expect(result.exitCode).toBe(0);
    expect(stdout).toContain('sibling 6.0');
    const chains = [...(await readSites(path.join(dir, 'sites.json'))).values()];
    expect(
      chains.some(
        (chain) =>
          chain[0].file === path.join(SCRIPTS, 'helper_module.py') &&
          chain[0].line === 5 &&
          chain[1]?.file === path.join(SCRIPTS, 'uses_sibling.py') &&
          chain[1]?.line === 4,
      ),
    ).toBe(true);
  });
});

describe('capture agent: exact call sites', () => {
  it("the line of torch.softmax(...) owns aten::softmax's CPU time, not the def line of its function", async () => {
    const { result, dir } = await launch('softmax_site.py');
    expect(result.exitCode).toBe(0);
    const script = path.join(SCRIPTS, 'softmax_site.py');
    expect(readJson<{ version: number }>(path.join(dir, 'sites.json')).version).toBe(3);
    // Every frame is the user's own file: no torch, standard library, <frozen ...> or agent frames.
    for (const chain of (await readSites(path.join(dir, 'sites.json'))).values()) {
      for (const frame of chain) expect(frame.file).toBe(script);
    }

    const profile = (await openProfile(dir)).profile;
    expect(profile.sites?.size).toBeGreaterThan(0);
    const softmaxIds: number[] = [];
    for (let i = 0; i < profile.slices.length; i++) {
      if (profile.nameOf(i) === 'aten::softmax') softmaxIds.push(profile.slices.externalId[i]);
    }
    expect(softmaxIds.length).toBe(4);
    // The expression's columns (1-based, end just past it), the callers' too: `torch.softmax(scores, dim=-1)` and
    // `attention(x)`.
    for (const id of softmaxIds) {
      expect(profile.sites?.get(id)?.[0]).toEqual({
        file: script,
        line: 6,
        function: 'attention',
        column: 21,
        endLine: 6,
        endColumn: 50,
      });
      expect(profile.sites?.get(id)?.[1]).toEqual({
        file: script,
        line: 20,
        function: 'main',
        column: 9,
        endLine: 20,
        endColumn: 21,
      });
    }

    const analysis = analyze(profile);
    const softmaxLine = analysis.lines.find((l) => l.file === script && l.line === 6);
    expect(softmaxLine?.exact).toBe(true);
    const owned = softmaxLine?.topOps.find((op) => op.name === 'aten::softmax');
    expect(owned?.calls).toBe(4);
    expect(owned?.cpuNs).toBeGreaterThan(0);
    // The def line (4) owns nothing.
    expect(analysis.lines.some((l) => l.file === script && l.line === 4)).toBe(false);

    // Ops run by Python operators (@, *, [0]) get their own lines and columns too, in loops as well.
    const source = readFileSync(script, 'utf8').split('\n');
    const innermost = (name: string): string[] => {
      const found = new Set<string>();
      for (let i = 0; i < profile.slices.length; i++) {
        if (profile.nameOf(i) !== name) continue;
        const frame = profile.sites?.get(profile.slices.externalId[i])?.[0];
        const text =
          frame && source[frame.line - 1].slice((frame.column ?? 1) - 1, (frame.endColumn ?? 1) - 1);
        found.add(frame ? `${frame.function}:${frame.line} ${text}` : 'none');
      }
      return [...found].sort();
    };
    expect(innermost('aten::matmul')).toEqual(['attention:5 x @ x.transpose(0, 1)', 'mix:12 x @ w']);
    expect(innermost('aten::mul')).toEqual(['mix:13 torch.relu(y) * 0.5']);
    expect(innermost('aten::relu')).toEqual(['mix:13 torch.relu(y)']);
    expect(innermost('aten::select')).toEqual(['mix:14 x[0]']);
  });
});
