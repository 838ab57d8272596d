/**
 * Progressive opening (ImportOptions.onPartial): the events read so far come out as a finished profile of their
 * own while the import reads on, and the import's own result is what it is without it.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { importTrace } from '../../extension/import/kineto';
import type { Profile } from '../../extension/model/profile';
import { profileBytes } from '../helpers/profileBytes';
import { ROOT, tracePath } from '../helpers/traces';

const file = path.join(ROOT, tracePath('tracelens_h100_owlv2_large.trace.json.gz'));

describe('a partial profile while the import reads on', () => {
  for (const parser of ['native', 'js'] as const) {
    it(`is a finished profile of a prefix of the events, and leaves the import's result as it is (${parser})`, async () => {
      let partial: Profile | undefined;
      let at = Number.NaN;
      const full = await importTrace(file, {
        parser,
        partialAfterMs: 0,
        partialMinReadMs: 0,
        onPartial: (p, fraction) => {
          expect(partial).toBeUndefined(); // once
          partial = p;
          at = fraction;
        },
      });
      expect(partial).toBeDefined();
      const early = partial!;
      expect(at).toBeGreaterThan(0);
      expect(at).toBeLessThan(0.75);
      expect(early.slices.length).toBeGreaterThan(0);
      expect(early.slices.length).toBeLessThan(full.slices.length);
      // Finished: tracks named and nested, analysis runs on it.
      expect(early.byTrack.offsets.length).toBe(early.tracks.length + 1);
      const analysis = analyze(early);
      expect(analysis).toBeDefined();
      // Each of its slices is one of the whole trace's: by name and duration, counted (its times are its own:
      // Kineto writes baseTimeNanoseconds after the events, so a partial profile's clock has no epoch yet).
      const count = (p: Profile) => {
        const counts = new Map<string, number>();
        for (let i = 0; i < p.slices.length; i++) {
          const k = `${p.nameOf(i)}+${p.slices.dur[i]}`;
          counts.set(k, (counts.get(k) ?? 0) + 1);
        }
        return counts;
      };
      const whole = count(full);
      for (const [k, n] of count(early)) expect(whole.get(k) ?? 0, k).toBeGreaterThanOrEqual(n);
      // The import itself: the same model as without a partial.
      expect(profileBytes(full)).toEqual(profileBytes(await importTrace(file, { parser })));
    });
  }

  it('is not offered when reading is quick (projected under 3 s)', async () => {
    let offered = false;
    await importTrace(path.join(ROOT, tracePath('hta_a100_simple_add.trace.json.gz')), {
      onPartial: () => (offered = true),
    });
    expect(offered).toBe(false);
  });
});
