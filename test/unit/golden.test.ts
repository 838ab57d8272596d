/**
 * Golden summaries of real traces, reviewed by eye when written. Regenerate with UPDATE_GOLDEN=1 and review the
 * diff: a change here is a change in what users are told about their trace.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { buildSummary } from '../../extension/analysis/summary';
import { importTrace } from '../../extension/import/kineto';
import { ROOT, tracePath } from '../helpers/traces';

const GOLDEN = [
  'hta_a100_simple_add.trace.json.gz',
  'hta_mi250_rocm6.2_minitoy.trace.json.gz',
  'ascend_npu_trace_view.json',
  'tracelens_h100_bert_small.trace.json.gz',
  'kineto_tbplugin_gpu_metrics_input.json',
];

describe('golden summaries', () => {
  for (const name of GOLDEN) {
    it(name, async () => {
      const trace = tracePath(name);
      const previous = process.cwd();
      process.chdir(ROOT);
      let summary;
      try {
        summary = buildSummary(analyze(await importTrace(trace)));
      } finally {
        process.chdir(previous);
      }
      const file = path.join(
        ROOT,
        'test',
        'golden',
        `${name.replace(/\.(trace\.)?json(\.gz)?$/, '')}.summary.json`,
      );
      if (process.env.UPDATE_GOLDEN) writeFileSync(file, `${JSON.stringify(summary, null, 1)}\n`);
      // A missing golden file fails: writing it here would make the check pass without anyone reviewing it.
      expect(
        existsSync(file),
        `${path.relative(ROOT, file)} is missing: run UPDATE_GOLDEN=1 and review it`,
      ).toBe(true);
      expect(summary).toEqual(JSON.parse(readFileSync(file, 'utf8')));
    });
  }
});
