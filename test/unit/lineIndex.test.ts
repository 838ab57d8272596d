import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  buildLineIndex,
  codeLensTitle,
  findDefinitionLine,
  heatLevel,
  hoverMarkdown,
  inlineText,
  lineHeat,
  lookupFile,
  normalizePath,
} from '../../extension/analysis/lineIndex';
import { buildSummary } from '../../extension/analysis/summary';
import { formatMs } from '../../extension/shared/format';
import { commandUri } from '../../extension/shared/text';
import { FILE, makeSynthetic } from '../fixtures/training-loop';

function sum(n: number, f: (i: number) => number): number {
  let total = 0;
  for (let i = 0; i < n; i++) total += f(i);
  return total;
}

describe('buildLineIndex with exact call sites', () => {
  const N = 50;
  const synthetic = makeSynthetic({ iterations: N });
  const index = buildLineIndex(synthetic.analysis);
  const file = lookupFile(index, FILE)!;

  it('indexes the file and marks it exact', () => {
    expect(index.exact).toBe(true);
    expect(file).toBeDefined();
    expect(file.exact).toBe(true);
    expect(file.lines.map((l) => l.line)).toEqual([5, 10, 11, 12, 20]);
  });

  it('puts each op and its child ops on the call-site line, counting top-level calls only', () => {
    const line5 = file.byLine.get(5)!;
    expect(line5.function).toBe('forward');
    expect(line5.calls).toBe(N); // aten::addmm is a child of aten::linear on the same line
    expect(line5.cpuSelfNs).toBe(N * (2_000 + 8_000));
    expect(line5.deviceSelfNs).toBe(sum(N, synthetic.gemmNs));
    expect(line5.kernelCount).toBe(N);
    expect(line5.topOps.map((o) => o.name)).toEqual(['aten::linear']);
    expect(line5.topOps[0].cpuNs).toBe(N * 10_000);
    expect(line5.topOps[0].deviceNs).toBe(sum(N, synthetic.gemmNs));
    expect(line5.kernels).toEqual([
      { name: 'ampere_sgemm_128x64_tn', count: N, totalNs: sum(N, synthetic.gemmNs) },
    ]);
    expect(line5.slices.length).toBe(N);
    expect(line5.kernelSlices.length).toBe(N);
    // The slices are the aten::linear ones, for "Show in timeline".
    for (const i of line5.slices) expect(synthetic.analysis.profile.nameOf(i)).toBe('aten::linear');
    // Self equals total on a line that calls no user function.
    expect(line5.deviceTotalNs).toBe(line5.deviceSelfNs);
  });

  it('sorts kernels by time and keeps every kernel of the line', () => {
    const line12 = file.byLine.get(12)!;
    expect(line12.kernelCount).toBe(2 * N);
    expect(line12.kernels.map((k) => k.name)).toEqual(['ampere_sgemm_64x64_nn', 'elementwise_kernel']);
    expect(line12.deviceSelfNs).toBe(sum(N, synthetic.backwardKernelNs) + N * 2_000);
  });

  it('gives a line that calls the user own function the callee time as "including callees"', () => {
    const line10 = file.byLine.get(10)!;
    const line5 = file.byLine.get(5)!;
    expect(line10.calls).toBe(0);
    expect(line10.deviceSelfNs).toBe(0);
    expect(line10.cpuSelfNs).toBe(0);
    expect(line10.deviceTotalNs).toBe(line5.deviceSelfNs);
    expect(line10.cpuTotalNs).toBe(line5.cpuSelfNs);
    const line20 = file.byLine.get(20)!;
    const all = [5, 11, 12].map((l) => file.byLine.get(l)!);
    expect(line20.deviceTotalNs).toBe(all.reduce((a, l) => a + l.deviceSelfNs, 0));
    expect(line20.cpuTotalNs).toBe(all.reduce((a, l) => a + l.cpuSelfNs, 0));
  });

  it('totals functions including callees for CodeLens', () => {
    const byName = new Map(file.functions.map((f) => [f.function, f]));
    const line = (l: number) => file.byLine.get(l)!;
    expect(byName.get('forward')!.deviceNs).toBe(line(5).deviceSelfNs);
    expect(byName.get('step')!.deviceNs).toBe(
      line(5).deviceSelfNs + line(11).deviceSelfNs + line(12).deviceSelfNs,
    );
    expect(byName.get('step')!.kernelCount).toBe(4 * N);
    expect(byName.get('step')!.firstLine).toBe(10);
    expect(byName.get('step')!.defLine).toBeUndefined();
    expect(byName.get('<module>')!.cpuNs).toBe(index.totalCpuNs);
    expect(byName.get('<module>')!.deviceNs).toBe(index.totalDeviceNs);
  });

  it('spreads exactly the profile time over the lines (self times partition it)', () => {
    const lines = [...index.files.values()].flatMap((f) => f.lines);
    expect(lines.reduce((a, l) => a + l.deviceSelfNs, 0)).toBe(index.totalDeviceNs);
    expect(lines.reduce((a, l) => a + l.cpuSelfNs, 0)).toBe(index.totalCpuNs);
    expect(index.hasDevice).toBe(true);
  });

  it('writes a hover with times, calls, ops, kernels and links', () => {
    const md = hoverMarkdown(index, file.byLine.get(5)!, {
      profileLabel: 'train.py',
      showInTimeline: 'command:flagos.x?1',
      showKernels: 'command:flagos.y?2',
    });
    expect(md).toContain('Device **' + formatMs(sum(N, synthetic.gemmNs)) + '**');
    expect(md).toContain(`${N} calls`);
    expect(md).toContain('`aten::linear`');
    expect(md).toContain('`ampere_sgemm_128x64_tn`');
    expect(md).toContain('[Show in timeline](command:flagos.x?1)');
    expect(md).toContain(`[Show kernels (${N})](command:flagos.y?2)`);
    const md10 = hoverMarkdown(index, file.byLine.get(10)!, { profileLabel: 'p' });
    // Line 10 only calls the user's forward(): no op of its own, the callee time instead, named as such.
    expect(md10).toContain(
      `Total (with callees): Device **${formatMs(sum(N, synthetic.gemmNs))}** · CPU **${formatMs(N * 10_000)}**`,
    );
    expect(md10).toContain('Self: no ops of its own');
    expect(md10).not.toContain('0 calls');
    expect(md10).not.toContain('Show in timeline');
  });

  it('lists the callee lines that spend a line’s time, as links that open the file at that line', () => {
    const line = (l: number) => file.byLine.get(l)!;
    expect(line(10).callees).toEqual([
      { file: FILE, line: 5, function: 'forward', cpuNs: line(5).cpuSelfNs, deviceNs: line(5).deviceSelfNs },
    ]);
    // The module line runs everything: its callees are the lines with ops, hottest (device) first.
    expect(line(20).callees.map((c) => c.line)).toEqual([5, 12, 11]);
    for (const c of line(20).callees) expect(c.deviceNs).toBe(line(c.line).deviceSelfNs);
    // A line whose ops are all its own has none.
    expect(line(5).callees).toEqual([]);
    const md = hoverMarkdown(index, line(20), {
      profileLabel: 'p',
      openLine: (f, l) => commandUri('flagos.openSourceLine', { file: f, line: l }),
    });
    expect(md).toContain(
      `- [train\\.py\\:5](${commandUri('flagos.openSourceLine', { file: FILE, line: 5 })}) \`forward\``,
    );
    expect(md.match(/\]\(command:flagos\.openSourceLine\?/g)).toHaveLength(3);
    // Without a way to open files the lines are text.
    const plain = hoverMarkdown(index, line(20), { profileLabel: 'p' });
    expect(plain).toContain('- train\\.py\\:5 `forward`');
    expect(plain).not.toContain('](');
  });
});

describe('buildLineIndex without call sites (function level)', () => {
  const N = 20;
  const synthetic = makeSynthetic({ iterations: N, exact: false });
  const index = buildLineIndex(synthetic.analysis);
  const file = lookupFile(index, FILE)!;

  it('keeps the def lines, labelled as function level', () => {
    expect(index.exact).toBe(false);
    expect(file.lines.map((l) => [l.line, l.function, l.exact])).toEqual([
      [3, 'forward', false],
      [8, 'step', false],
    ]);
    const forward = file.byLine.get(3)!;
    // aten::addmm has no line of its own: it inherits its parent's.
    expect(forward.cpuSelfNs).toBe(N * 10_000);
    expect(forward.deviceSelfNs).toBe(sum(N, synthetic.gemmNs));
    expect(forward.deviceTotalNs).toBe(forward.deviceSelfNs);
    expect(file.functions.find((f) => f.function === 'step')!.defLine).toBe(8);
    const md = hoverMarkdown(index, forward, { profileLabel: 'trace.json' });
    expect(md).toContain('function level');
  });
});

describe('CPU-only profiles', () => {
  it('heats lines by their CPU total when there is no device time', () => {
    const index = buildLineIndex(makeSynthetic({ iterations: 5, device: false }).analysis);
    const file = lookupFile(index, FILE)!;
    expect(index.hasDevice).toBe(false);
    expect(index.totalDeviceNs).toBe(0);
    // Per iteration: line 5 spends 10 us of CPU, line 11 6 us, line 12 15 us; the module line 20 runs all 31 us.
    expect(index.maxLineNs).toBe(5 * 31_000);
    expect(heatLevel(index, file.byLine.get(20)!)).toBe(4);
    expect(lineHeat(index, file.byLine.get(12)!)).toBeCloseTo(15 / 31);
    expect(heatLevel(index, file.byLine.get(12)!)).toBe(4);
    expect(lineHeat(index, file.byLine.get(11)!)).toBeCloseTo(6 / 31);
    expect(heatLevel(index, file.byLine.get(11)!)).toBe(3);
    // Line 10 calls forward() and has no op of its own: its heat is forward's time, not nothing.
    expect(lineHeat(index, file.byLine.get(10)!)).toBeCloseTo(10 / 31);
    expect(heatLevel(index, file.byLine.get(10)!)).toBe(4);
    const idle = { ...file.byLine.get(10)!, cpuTotalNs: 0, deviceTotalNs: 0 };
    expect(heatLevel(index, idle)).toBe(-1);
    expect(inlineText(file.byLine.get(5)!)).toBe('0 ms device · 0.05 ms CPU');
    expect(inlineText(file.byLine.get(5)!, index.hasDevice)).toBe('0.05 ms CPU');
    expect(inlineText(file.byLine.get(10)!, index.hasDevice)).toBe('0.05 ms CPU');
  });
});

describe('lookupFile', () => {
  const index = buildLineIndex(makeSynthetic({ iterations: 1 }).analysis);
  it('matches the exact path, a normalised path, and the same file in another checkout', () => {
    expect(lookupFile(index, FILE)).toBeDefined();
    expect(lookupFile(index, '/home/user/proj/./sub/../train.py')).toBeDefined();
    expect(lookupFile(index, '/srv/checkout/proj/train.py')?.file).toBe(FILE);
    expect(lookupFile(index, '/home/user/proj/eval.py')).toBeUndefined();
  });
  it('normalises Windows paths', () => {
    expect(normalizePath('C:\\Users\\Me\\x.py')).toBe('c:/users/me/x.py');
    expect(normalizePath('/a/b/../c/./d.py')).toBe('/a/c/d.py');
  });
});

describe('formatting', () => {
  it('formats milliseconds like the examples', () => {
    expect(formatMs(1_234_000)).toBe('1.23 ms');
    expect(formatMs(400_000)).toBe('0.40 ms');
    expect(formatMs(12_345_678)).toBe('12.3 ms');
    expect(formatMs(123_456_789)).toBe('123 ms');
    expect(formatMs(12_345_678_901)).toBe('12.3 s');
    expect(formatMs(5_500_000_000)).toBe('5.50 s');
    expect(formatMs(999_000_000)).toBe('999 ms');
    expect(formatMs(1_000)).toBe('<0.01 ms');
    expect(formatMs(0)).toBe('0 ms');
  });
  it('titles CodeLens like "device 12.3 ms · CPU 4.1 ms · 28 kernels"', () => {
    expect(
      codeLensTitle({
        file: 'f',
        function: 'g',
        defLine: 1,
        firstLine: 1,
        cpuNs: 4.1e6,
        deviceNs: 12.3e6,
        kernelCount: 28,
        calls: 3,
      }),
    ).toBe('device 12.3 ms · CPU 4.10 ms · 28 kernels');
  });
  it('finds def lines above a call site', () => {
    const src = [
      'import torch',
      'class Net:',
      '    async def forward(self, x):',
      '        return x',
      'def step():',
      '    pass',
    ];
    expect(findDefinitionLine((l) => src[l], 'forward', 3)).toBe(2);
    expect(findDefinitionLine((l) => src[l], 'Net.forward', 3)).toBe(2);
    expect(findDefinitionLine((l) => src[l], 'step', 5)).toBe(4);
    expect(findDefinitionLine((l) => src[l], 'step', 3)).toBe(-1);
    expect(findDefinitionLine((l) => src[l], '<module>', 5)).toBe(0);
  });
});

describe('properties', () => {
  it('self times always sum to the profile totals', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.boolean(),
        fc.boolean(),
        (iterations, exact, device) => {
          const index = buildLineIndex(makeSynthetic({ iterations, exact, device }).analysis);
          const lines = [...index.files.values()].flatMap((f) => f.lines);
          const dev = lines.reduce((a, l) => a + l.deviceSelfNs, 0);
          const cpu = lines.reduce((a, l) => a + l.cpuSelfNs, 0);
          return (
            dev === index.totalDeviceNs &&
            cpu === index.totalCpuNs &&
            lines.every((l) => l.deviceTotalNs >= l.deviceSelfNs)
          );
        },
      ),
    );
  });
});

describe('functions told apart by their def lines', () => {
  // The profiled file's text, as the editor reads it from disk.
  const source = (stepName: string) =>
    [
      'import torch', // 1
      '', // 2
      'def forward(x):', // 3
      '    w = torch.ones(4, 4)', // 4
      '    return torch.nn.functional.linear(x, w)', // 5
      '', // 6
      '', // 7
      `def ${stepName}(x):`, // 8
      '    """One step."""', // 9
      '    y = forward(x)', // 10
      '    loss = y.sum()', // 11
      '    loss.backward()', // 12
      ...Array.from({ length: 7 }, () => ''), // 13-19
      `for x in batches: ${stepName}(x)`, // 20
    ].join('\n');

  it('finds each function def line from the source', () => {
    const index = buildLineIndex(makeSynthetic({ iterations: 3 }).analysis, {
      readSource: () => source('step'),
    });
    const file = lookupFile(index, FILE)!;
    expect(file.functions.map((f) => [f.function, f.defLine])).toEqual([
      ['<module>', 1],
      ['forward', 3],
      ['step', 8],
    ]);
  });

  it('keeps two functions of the same name apart (a caller includes its callee once)', () => {
    const synthetic = makeSynthetic({ iterations: 3, stepName: 'forward' });
    const withSource = lookupFile(
      buildLineIndex(synthetic.analysis, { readSource: () => source('forward') }),
      FILE,
    )!;
    const forwards = withSource.functions.filter((f) => f.function === 'forward');
    expect(forwards.map((f) => f.defLine)).toEqual([3, 8]);
    const line = (l: number) => withSource.byLine.get(l)!;
    expect(forwards[0].deviceNs).toBe(line(5).deviceSelfNs);
    expect(forwards[1].deviceNs).toBe(line(5).deviceSelfNs + line(11).deviceSelfNs + line(12).deviceSelfNs);
    // Without the text both are one "forward": the op of line 5 is counted once in it.
    const withoutSource = lookupFile(buildLineIndex(synthetic.analysis), FILE)!;
    const merged = withoutSource.functions.filter((f) => f.function === 'forward');
    expect(merged).toHaveLength(1);
    expect(merged[0].deviceNs).toBe(forwards[1].deviceNs);
  });

  it('reads each source file once', () => {
    let reads = 0;
    buildLineIndex(makeSynthetic({ iterations: 20 }).analysis, {
      readSource: () => {
        reads++;
        return source('step');
      },
    });
    expect(reads).toBe(1);
  });
});

describe('hover of a CPU-only profile', () => {
  it('shows CPU time and no device column', () => {
    const index = buildLineIndex(makeSynthetic({ iterations: 4, device: false }).analysis);
    const md = hoverMarkdown(index, lookupFile(index, FILE)!.byLine.get(5)!, { profileLabel: 'cpu run' });
    expect(md).toContain('Self: CPU **0.04 ms** · 4 calls');
    expect(md).not.toContain('Device');
    expect(md).toContain('| Op | Calls | CPU |');
    expect(md).toContain('| `aten::linear` | 4× | 0.04 ms |');
    // Said once, in the header, not as a note under every hover's numbers.
    expect(md.split('\n')[0]).toContain('CPU only (no device activity)');
  });
});

describe('heat scale', () => {
  it('spreads three decades of share over the levels', () => {
    const index = buildLineIndex(makeSynthetic({ iterations: 1 }).analysis);
    const entry = lookupFile(index, FILE)!.byLine.get(5)!;
    const at = (share: number) =>
      heatLevel({ ...index, hasDevice: true, maxLineNs: entry.deviceTotalNs / share }, entry);
    expect([1, 0.5, 0.1, 0.03, 0.01, 0.002, 0.0001].map(at)).toEqual([4, 4, 3, 2, 1, 0, 0]);
  });
});

describe('one attribution: the Lines rows, the hover, the gutter, the inline text and the CodeLens agree', () => {
  it('every line shows the analysis’s numbers in every view (property over the training loop)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        (iterations, exact, device, recursion, backward) => {
          const { analysis } = makeSynthetic({ iterations, exact, device, recursion, backward });
          const index = buildLineIndex(analysis);
          const summary = buildSummary(analysis);
          const us = (ns: number) => Math.round(ns) / 1000;
          const rowsOfLine = new Map<string, number>();
          for (const stat of analysis.lines) {
            const key = `${stat.file}:${stat.line}`;
            rowsOfLine.set(key, (rowsOfLine.get(key) ?? 0) + 1);
          }
          analysis.lines.forEach((stat, l) => {
            // The CLI's JSON is the same row.
            expect(summary.lines[l]).toMatchObject({
              file: stat.file,
              line: stat.line,
              cpu_us: us(stat.cpuSelfNs),
              device_us: us(stat.deviceSelfNs),
              cpu_total_us: us(stat.cpuTotalNs),
              device_total_us: us(stat.deviceTotalNs),
              ops: stat.ops,
            });
            const entry = lookupFile(index, stat.file)!.byLine.get(stat.line)!;
            expect(entry.stats).toContain(stat);
            if (rowsOfLine.get(`${stat.file}:${stat.line}`)! > 1) return; // merged rows: below
            expect([entry.cpuSelfNs, entry.deviceSelfNs, entry.cpuTotalNs, entry.deviceTotalNs]).toEqual([
              stat.cpuSelfNs,
              stat.deviceSelfNs,
              stat.cpuTotalNs,
              stat.deviceTotalNs,
            ]);
            expect(entry.calls).toBe(stat.ops);
            expect(entry.topOps).toEqual(stat.topOps.slice(0, entry.topOps.length));
            expect(entry.kernels.slice(0, stat.topKernels.length)).toEqual(stat.topKernels);
            expect(entry.kind).toBe(stat.kind);
            // Gutter heat and inline text: the same quantity, the total.
            const heat = device ? stat.deviceTotalNs : stat.cpuTotalNs;
            expect(lineHeat(index, entry) * index.maxLineNs).toBeCloseTo(heat, 6);
            expect(inlineText(entry, index.hasDevice)).toBe(
              device
                ? `${formatMs(stat.deviceTotalNs)} device · ${formatMs(stat.cpuTotalNs)} CPU`
                : `${formatMs(stat.cpuTotalNs)} CPU`,
            );
            const md = hoverMarkdown(index, entry, { profileLabel: 'p' });
            expect(md).toContain(
              device
                ? `Total (with callees): Device **${formatMs(stat.deviceTotalNs)}** · CPU **${formatMs(stat.cpuTotalNs)}**`
                : `Total (with callees): CPU **${formatMs(stat.cpuTotalNs)}**`,
            );
            if (stat.ops > 0)
              expect(md).toContain(
                device
                  ? `Self: Device **${formatMs(stat.deviceSelfNs)}**`
                  : `Self: CPU **${formatMs(stat.cpuSelfNs)}**`,
              );
          });
          // CodeLens: a function's time is the total of a line every op of it passes through.
          const file = lookupFile(index, FILE)!;
          const fn = (name: string) => file.functions.find((f) => f.function === name)!;
          const total = (l: number) => file.byLine.get(l)!;
          if (exact) {
            expect([fn('forward').cpuNs, fn('forward').deviceNs]).toEqual([
              total(5).cpuTotalNs,
              total(5).deviceTotalNs,
            ]);
            expect([fn('<module>').cpuNs, fn('<module>').deviceNs]).toEqual([
              total(20).cpuTotalNs,
              total(20).deviceTotalNs,
            ]);
          } else {
            expect(fn('forward').cpuNs).toBe(total(3).cpuTotalNs);
            expect(fn('step').deviceNs).toBe(total(8).deviceTotalNs);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('counts an op once on a line and in a function that recur in its chain (recursion)', () => {
    const N = 6;
    const synthetic = makeSynthetic({ iterations: N, recursion: true });
    const { analysis } = synthetic;
    const file = lookupFile(buildLineIndex(analysis), FILE)!;
    const gemm = sum(N, synthetic.gemmNs);
    const line4 = analysis.lines.find((l) => l.line === 4)!;
    expect(line4.cpuSelfNs).toBe(0);
    expect(line4.deviceTotalNs).toBe(gemm);
    expect(line4.cpuTotalNs).toBe(N * 10_000);
    expect(file.byLine.get(4)!.deviceTotalNs).toBe(gemm);
    expect(file.byLine.get(10)!.deviceTotalNs).toBe(gemm);
    const forward = file.functions.find((f) => f.function === 'forward')!;
    expect([forward.deviceNs, forward.kernelCount]).toEqual([gemm, N]);
    // The line's callee is line 5, once.
    expect(file.byLine.get(4)!.callees.map((c) => [c.line, c.deviceNs])).toEqual([[5, gemm]]);
  });

  it('keeps the columns of the expressions, the leftmost where a line has several', () => {
    const { analysis } = makeSynthetic({ iterations: 2, backward: true });
    const column = (l: number) => analysis.lines.filter((s) => s.line === l).map((s) => s.column);
    expect(column(5)).toEqual([12]);
    expect(column(10)).toEqual([9]);
    expect(column(20)).toEqual([19]);
    // Line 12: the exact row knows its column, the backward row does not.
    expect(analysis.lines.filter((s) => s.line === 12).map((s) => [s.kind, s.column])).toEqual([
      ['backward', undefined],
      [undefined, 5],
    ]);
    expect(buildSummary(analysis).lines.find((l) => l.line === 10)!.column).toBe(9);
    expect(lookupFile(buildLineIndex(analysis), FILE)!.byLine.get(12)!.column).toBe(5);
  });

  it('shows a line with rows of two kinds as one entry: self added, total over the chains once, each named', () => {
    const N = 4;
    const synthetic = makeSynthetic({ iterations: N, backward: true });
    const { analysis } = synthetic;
    const rows = analysis.lines.filter((s) => s.line === 12);
    const [autograd, seed] = rows;
    expect(autograd).toMatchObject({ kind: 'backward', exact: true, ops: N, cpuSelfNs: N * 15_000 });
    expect(seed.kind).toBeUndefined();
    expect(seed).toMatchObject({ ops: N, cpuSelfNs: N * 1_000, deviceSelfNs: 0 });
    const index = buildLineIndex(analysis);
    const entry = lookupFile(index, FILE)!.byLine.get(12)!;
    expect(entry.stats).toEqual([autograd, seed]);
    expect(entry.kind).toBeUndefined();
    expect(entry.cpuSelfNs).toBe(autograd.cpuSelfNs + seed.cpuSelfNs);
    expect(entry.cpuTotalNs).toBe(autograd.cpuTotalNs + seed.cpuTotalNs); // disjoint ops: the sum
    expect(entry.deviceTotalNs).toBe(sum(N, synthetic.backwardKernelNs) + N * 2_000);
    expect(entry.calls).toBe(2 * N);
    expect(entry.slices).toHaveLength(2 * N);
    const md = hoverMarkdown(index, entry, { profileLabel: 'p' });
    expect(md).toContain(`- backward: autograd ops charged to the line that called backward(): Device **`);
    expect(md).toContain(`- exact line: Device **0 ms** · CPU **${formatMs(N * 1_000)}** · ${N} calls`);
    expect(
      buildSummary(analysis)
        .lines.filter((l) => l.line === 12)
        .map((l) => l.kind),
    ).toEqual(['backward', undefined]);
    // A line of one kind other than exact says which.
    const alone = { ...entry, stats: [autograd], kind: 'backward' as const };
    expect(hoverMarkdown(index, alone, { profileLabel: 'p' })).toContain('this line (backward)');
  });
});
