/**
 * `flagprof diff` of two real torch runs of examples/gpt: one as shipped, one where a line of model.py was added
 * that does a large matmul. The added line leads the line table, and the lines below it, moved down by one, still
 * find their rows of the first run — from the two copies' texts, and, when the file was edited in place and run
 * again (so the first run's text is gone), from what the lines do.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { diffAnalyses, type LineDiff, type ProfileDiff } from '../../extension/analysis/diff';
import { buildLineIndex, hoverMarkdown, normalizePath } from '../../extension/analysis/lineIndex';
import { diffRunOf } from '../../extension/capture/diffRun';
import { openProfile, type OpenedProfile } from '../../extension/capture/open';
import { buildCli, cleanupCliRuns, runCli } from '../helpers/cli';
import { PYTHON, requirePython, ROOT, tempDir } from '../helpers/agent';

const GPT = path.join(ROOT, 'examples', 'gpt');
/** The line the edit goes after, and a line further down the same function whose row must follow the shift. */
const ANCHOR = 'att = (q @ k.transpose(-2, -1)) / math.sqrt(d)';
const BELOW = 'y = att @ v';
const ADDED = '        att = att + 0 * (torch.randn(1024, 1024) @ torch.randn(1024, 1024)).sum()';
/** Torch runs can be ten times slower on a loaded machine. */
const RUN_MS = 600_000;

const work = tempDir('diff');
const original = path.join(work, 'original');
const edited = path.join(work, 'edited');

/** 1-based line of the first line containing `text`. */
function lineOf(file: string, text: string): number {
  const index = readFileSync(file, 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(text));
  expect(index, `${text} in ${file}`).toBeGreaterThanOrEqual(0);
  return index + 1;
}

/** model.py with the expensive line added after ANCHOR. */
function addLine(file: string): void {
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.splice(lineOf(file, ANCHOR), 0, ADDED);
  writeFileSync(file, lines.join('\n'));
}

async function profile(folder: string, out: string): Promise<void> {
  const result = await runCli(
    ['profile', '--out', out, '--python', PYTHON, '--', path.join(folder, 'train.py'), '--steps', '3'],
    { timeoutMs: RUN_MS },
  );
  expect(result.code, result.stderr).toBe(0);
}

async function diffJson(a: string, b: string): Promise<ProfileDiff> {
  const result = await runCli(['diff', a, b, '--json'], { timeoutMs: RUN_MS });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as ProfileDiff;
}

function row(diff: ProfileDiff, file: string, lineB: number): LineDiff | undefined {
  return diff.lines.find((l) => l.file === file && l.lineB === lineB && l.kind === undefined);
}

/** What both ways of matching must show: the added line on top, new and edited; the line below it followed. */
function expectAddedLineOnTop(diff: ProfileDiff, modelBefore: string, modelAfter: string): void {
  const added = lineOf(modelAfter, ADDED.trim());
  const [top] = diff.lines;
  expect(top).toMatchObject({ file: 'model.py', lineA: null, lineB: added, status: 'new', edited: true });
  expect(top.deltaNs).toBeGreaterThan(0);
  // "Clearly more expensive": a 1024² matmul per call, against the attention's own small matmul in the same run.
  const below = row(diff, 'model.py', lineOf(modelAfter, BELOW))!;
  expect(below).toMatchObject({ lineA: lineOf(modelBefore, BELOW), status: 'both', edited: false });
  expect(top.b!.cpuSelfNs).toBeGreaterThan(below.b!.cpuSelfNs);
  // Nothing else was edited; the other lines are lines of both runs (a few ops may fall between two segments).
  const rest = diff.lines.slice(1);
  expect(rest.filter((l) => l.edited)).toEqual([]);
  expect(rest.filter((l) => l.status === 'both').length / rest.length).toBeGreaterThan(0.9);
  // The added line runs once per block and step: 2 blocks × 3 steps more aten::mm calls.
  const mm = diff.ops.find((op) => op.name === 'aten::mm')!;
  expect(mm.b!.calls - mm.a!.calls).toBe(6);
}

describe('flagprof diff of two torch runs of examples/gpt', { timeout: 3 * RUN_MS }, () => {
  beforeAll(async () => {
    requirePython();
    buildCli();
    for (const folder of [original, edited])
      cpSync(GPT, folder, { recursive: true, filter: (f) => !f.includes('__pycache__') });
    addLine(path.join(edited, 'model.py'));
    await profile(original, path.join(work, 'before'));
    await profile(edited, path.join(work, 'after'));
  }, 2 * RUN_MS);
  afterAll(() => {
    cleanupCliRuns();
    rmSync(work, { recursive: true, force: true });
  });

  it('two copies of the script: the line diff of their texts puts the added line on top', async () => {
    const diff = await diffJson(path.join(work, 'before'), path.join(work, 'after'));
    expect(diff.primary).toBe(diff.a.hasDevice && diff.b.hasDevice ? 'device' : 'cpu');
    expect(diff.notes.join('\n')).toMatch(
      /model\.py differs between the runs \(1 line of B new or changed, 0 of A/,
    );
    expectAddedLineOnTop(diff, path.join(original, 'model.py'), path.join(edited, 'model.py'));
    // train.py is the same text in both copies: its lines match by number.
    expect(diff.lines.filter((l) => l.file === 'train.py').every((l) => l.lineA === l.lineB)).toBe(true);

    const text = await runCli(['diff', path.join(work, 'before'), path.join(work, 'after'), '--top', '100']);
    expect(text.code).toBe(0);
    const table = text.stdout.slice(text.stdout.indexOf('Source lines by Δ'));
    const firstRow = table.split('\n')[3];
    expect(firstRow).toMatch(
      new RegExp(`^model\\.py:${lineOf(path.join(edited, 'model.py'), ADDED.trim())} .*edited, new$`),
    );
    expect(table).toContain(`(A:${lineOf(path.join(original, 'model.py'), BELOW)})`);
  });

  it("the editor's hover of a line shows its Δ against the base run (Compare with…)", async () => {
    const [before, after] = await Promise.all(
      ['before', 'after'].map((name) => openProfile(path.join(work, name))),
    );
    const run = (opened: OpenedProfile, label: string) =>
      diffRunOf(
        opened.profile,
        analyze(opened.profile),
        opened.source.kind === 'session' ? opened.source.session?.record : undefined,
        label,
      );
    const base = run(before, 'before');
    const current = run(after, 'after');
    const diff = diffAnalyses(base, current);
    const index = buildLineIndex(current.analysis);
    const model = path.join(edited, 'model.py');
    const file = index.files.get(normalizePath(model))!;
    const hover = (text: string): string => {
      const line = lineOf(model, text);
      const entry = file.byLine.get(line)!;
      const row = diff.lines.find((l) => l.file === 'model.py' && l.lineB === line && l.kind === undefined);
      return hoverMarkdown(index, entry, { profileLabel: 'after', baseline: { label: 'before', row } });
    };
    expect(hover(ADDED.trim())).toMatch(
      /Δ vs before: \*\*new\*\* — the line ran no ops there \(the line was edited\)/,
    );
    // The line below moved down by one: its row is the first run's line, and the hover says where it was.
    expect(hover(BELOW)).toMatch(
      new RegExp(
        `Δ vs before: CPU total \\*\\*[+−±][^*]+\\*\\*.* · calls \\d+ → \\d+ · was line ${lineOf(path.join(original, 'model.py'), BELOW)}`,
      ),
    );
  });

  it('the file edited in place and run again: lines matched by what they do, the added line on top', async () => {
    const before = path.join(work, 'original-model.py');
    cpSync(path.join(original, 'model.py'), before);
    addLine(path.join(original, 'model.py'));
    await profile(original, path.join(work, 'again'));
    const diff = await diffJson(path.join(work, 'before'), path.join(work, 'again'));
    expect(diff.notes.join('\n')).toMatch(
      /model\.py: the text each run profiled is not known.*function and ops/,
    );
    expectAddedLineOnTop(diff, before, path.join(original, 'model.py'));
  });
});
