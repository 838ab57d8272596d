/**
 * `flagprof profile --memory` with real torch: a script that allocates known sizes on known lines
 * (test/fixtures/memory/allocs.py) gets those bytes on those lines, on the CPU (torch's profile_memory records
 * the CPU allocator too) and on an accelerator where torch sees one.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { buildLineIndex, hoverMarkdown, normalizePath } from '../../extension/analysis/lineIndex';
import type { MemoryJson, SummaryJson } from '../../extension/analysis/summary';
import { openProfile } from '../../extension/capture/open';
import { formatBytes } from '../../extension/shared/format';
import { buildCli, cleanupCliRuns, makeTempDir, runCli } from '../helpers/cli';
import { PYTHON, ROOT } from '../helpers/paths';

const SCRIPT = path.join(ROOT, 'test', 'fixtures', 'memory', 'allocs.py');
const SOURCE = readFileSync(SCRIPT, 'utf8');
/** Torch runs can be ten times slower on a loaded machine. */
const RUN_MS = 300_000;

/** A size the script declares (`BIG = 16 << 20`). */
function size(name: string): number {
  const match = new RegExp(`^${name} = (\\d+) << (\\d+)$`, 'm').exec(SOURCE);
  if (!match) throw new Error(`${name} is not declared in ${SCRIPT}`);
  return Number(match[1]) * 2 ** Number(match[2]);
}

/** The 1-based line carrying `# line: MARK`. */
function lineOf(mark: string): number {
  return SOURCE.split('\n').findIndex((text) => text.endsWith(`# line: ${mark}`)) + 1;
}

const BIG = size('BIG');
const SMALL = size('SMALL');
const FREED = size('FREED');
const STEPS = 3;

const tmp = makeTempDir('memory');

async function profile(args: string[], out: string): Promise<SummaryJson> {
  const run = await runCli(
    ['profile', '--python', PYTHON, '--mode', 'cpu', '--out', out, '--json', ...args, '--', SCRIPT],
    { cwd: tmp.dir, timeoutMs: RUN_MS },
  );
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as SummaryJson;
}

function lineRow(memory: MemoryJson, mark: string, device: string) {
  return memory.lines.find((l) => l.file === SCRIPT && l.line === lineOf(mark) && l.device === device);
}

describe('flagprof profile --memory', () => {
  let withMemory: SummaryJson;
  const session = path.join(tmp.dir, 'with-memory');

  beforeAll(async () => {
    buildCli();
    withMemory = await profile(['--memory'], session);
  }, RUN_MS);
  afterAll(() => {
    cleanupCliRuns();
    tmp.remove();
  });

  it('puts each allocation on the line that made it, with the bytes the script allocated', () => {
    const memory = withMemory.memory!;
    expect(memory, 'no memory section in the summary').toBeDefined();
    const devices = memory.devices.map((d) => d.device);
    expect(devices).toContain('cpu');
    for (const device of devices.filter((d) => d === 'cpu' || d.startsWith('cuda'))) {
      const big = lineRow(memory, 'big', device)!;
      const small = lineRow(memory, 'small', device)!;
      const freed = lineRow(memory, 'freed', device)!;
      expect(big).toMatchObject({ allocations: STEPS, allocated_bytes: STEPS * BIG, function: 'step' });
      expect(small).toMatchObject({ allocations: STEPS, allocated_bytes: STEPS * SMALL });
      expect(freed).toMatchObject({ allocations: STEPS, allocated_bytes: STEPS * FREED });
      expect(memory.lines.filter((l) => l.device === device)[0]).toBe(big);
      // At the peak (the last step's FREED block not yet dropped) every kept block is held, one FREED block too.
      expect(big.at_peak_bytes).toBe(STEPS * BIG);
      expect(small.at_peak_bytes).toBe(STEPS * SMALL);
      expect(freed.at_peak_bytes).toBe(FREED);
      const peak = memory.devices.find((d) => d.device === device)!;
      expect(peak.totals).toBe('trace');
      expect(peak.peak_allocated_bytes).toBeGreaterThanOrEqual(STEPS * (BIG + SMALL) + FREED);
      expect(peak.allocated_bytes).toBeGreaterThanOrEqual(STEPS * (BIG + SMALL + FREED));
      // `del freed` frees between ops: on no line, counted for the device.
      const rest = memory.unattributed.find((u) => u.device === device)!;
      expect(rest.freed_bytes).toBeGreaterThanOrEqual(STEPS * FREED);
      expect(freed.freed_bytes).toBe(0);
    }
  });

  it('the last allocations before the end are the last step’s, on their lines, with the running total', () => {
    const last = withMemory.memory!.last_allocations;
    expect(last.length).toBeGreaterThanOrEqual(3);
    const [big, small, freed] = last.slice(-3);
    const device = big.device;
    expect(big).toMatchObject({ file: SCRIPT, line: lineOf('big'), bytes: BIG, device });
    expect(small).toMatchObject({ line: lineOf('small'), bytes: SMALL, device });
    expect(freed).toMatchObject({ line: lineOf('freed'), bytes: FREED, device });
    expect(freed.total_allocated_bytes! - big.total_allocated_bytes!).toBe(SMALL + FREED);
    expect(big.at_us).toBeLessThan(freed.at_us);
  });

  it('flagprof summary of the session shows the Memory section with those lines', async () => {
    const run = await runCli(['summary', session], { cwd: tmp.dir, timeoutMs: RUN_MS });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Memory (peak allocated per device)');
    const section = run.stdout.slice(run.stdout.indexOf('Top source lines by bytes allocated'));
    const row = section.split('\n').find((l) => l.startsWith(`${SCRIPT}:${lineOf('big')} `));
    expect(row).toMatch(/\bstep\s+cpu\s+48\.0 MB\s+0 bytes\s+48\.0 MB\s+48\.0 MB\s+3$/);
  });

  it("the editor's hover of the line says what it allocated and what it still held at the peak", async () => {
    const { profile } = await openProfile(session);
    const index = buildLineIndex(analyze(profile));
    const entry = index.files.get(normalizePath(SCRIPT))!.byLine.get(lineOf('big'))!;
    expect(entry.memory).toMatchObject({
      allocations: STEPS,
      allocatedBytes: STEPS * BIG,
      atPeakBytes: STEPS * BIG,
    });
    const md = hoverMarkdown(index, entry, { profileLabel: 'allocs' });
    expect(md).toContain(
      `Memory: allocated **${formatBytes(STEPS * BIG)}** in ${STEPS} allocations (freed 0 bytes), **${formatBytes(STEPS * BIG)}** still held at the peak`,
    );
  });

  it('without --memory nothing is recorded and the summary has no memory', async () => {
    const plain = await profile([], path.join(tmp.dir, 'without-memory'));
    expect(plain).not.toHaveProperty('memory');
    expect(plain.lines.some((l) => l.file === SCRIPT && l.line === lineOf('big'))).toBe(true);
  });
});
