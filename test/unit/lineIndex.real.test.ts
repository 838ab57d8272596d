// The per-line index on real traces (../shared/traces): function-level lines (traces carry no call sites) must
// be the analysis's own line rows, and self times must never exceed what the profile holds.
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { importTrace } from '../../extension/import/kineto';
import { analyze } from '../../extension/analysis/analyze';
import { buildLineIndex, hoverMarkdown, normalizePath } from '../../extension/analysis/lineIndex';

const traces = path.resolve(__dirname, '../../../shared/traces');

describe.each([
  'tracelens_h100_bert_small.trace.json.gz',
  'tracelens_mi300x8_resnet_act_ckpt_rank0.trace.json.gz',
  'tracelens_b200x8_eager.trace.json.gz',
])('%s', (name) => {
  it('indexes every source line of the analysis, at function level, with consistent times', async () => {
    const analysis = analyze(await importTrace(path.join(traces, name)));
    const index = buildLineIndex(analysis);
    expect(analysis.lines.length).toBeGreaterThan(0);
    expect(index.exact).toBe(false);
    let selfDevice = 0;
    for (const stat of analysis.lines) {
      const entry = index.files.get(normalizePath(stat.file))?.byLine.get(stat.line);
      expect(entry, `${stat.file}:${stat.line}`).toBeDefined();
      if (!entry) continue;
      expect(entry.exact).toBe(false);
      expect(stat.kind).toBe('function');
      // One attribution: the editor's entry is the analysis's row (function level has one kind per line).
      expect(entry.stats).toEqual([stat]);
      expect(entry.calls).toBe(stat.ops);
      expect([entry.cpuSelfNs, entry.deviceSelfNs, entry.cpuTotalNs, entry.deviceTotalNs]).toEqual([
        stat.cpuSelfNs,
        stat.deviceSelfNs,
        stat.cpuTotalNs,
        stat.deviceTotalNs,
      ]);
      expect(entry.deviceSelfNs).toBeLessThanOrEqual(entry.deviceTotalNs);
      for (const k of stat.topKernels) expect(entry.kernels.map((x) => x.name)).toContain(k.name);
      selfDevice += entry.deviceSelfNs;
      expect(hoverMarkdown(index, entry, { profileLabel: name })).toContain('function level');
    }
    expect(selfDevice).toBeLessThanOrEqual(index.totalDeviceNs * (1 + 1e-9));
  });
});
