import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ImportCancelled, importTrace } from '../../extension/import/kineto';
import { TRACES } from '../helpers/paths';

const GZIP = path.join(TRACES, 'tracelens_h100_owlv2_large.trace.json.gz');
const PLAIN = path.join(TRACES, 'ascend_npu_trace_view.json');

describe('opening a trace reports how far it is and can be cancelled', () => {
  for (const file of [GZIP, PLAIN])
    it(`${path.basename(file)}: the share read rises to 1, a percent at a time at most`, async () => {
      const seen: number[] = [];
      const profile = await importTrace(file, { onProgress: (f) => seen.push(f) });
      expect(profile.slices.length).toBeGreaterThan(0);
      expect(seen.at(-1)).toBe(1);
      for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]);
      expect(seen.length).toBeLessThanOrEqual(101);
    });

  for (const file of [GZIP, PLAIN])
    it(`${path.basename(file)}: Cancel stops the import with a one-line ImportCancelled`, async () => {
      const controller = new AbortController();
      const error = await importTrace(file, {
        signal: controller.signal,
        onProgress: (f) => {
          if (f > 0) controller.abort();
        },
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ImportCancelled);
      expect((error as Error).message).toMatch(
        new RegExp(`${path.basename(file).replace(/\./g, '\\.')}: opening it was cancelled$`),
      );
    });
});
