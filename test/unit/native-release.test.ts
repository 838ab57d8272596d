/**
 * An import through the addon's scanner leaves nothing behind: the scanner held its callbacks (which close over the
 * importer and its profile) by strong references, roots the collector never frees, so every trace opened in the
 * editor stayed in the extension host's memory (82 MB more per open of a 56 MB trace). Checked with a WeakRef to the
 * profile after a full collection, on a real trace, read from disk and from memory, and after a failed import.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { importTrace, importTraceBytes, type ImportOptions } from '../../extension/import/kineto';
import { nativeScanAvailable } from '../../extension/import/nativeScan';
import { loadAddon } from '../../extension/import/addon';
import type { Profile } from '../../extension/model/profile';
import { ROOT, realTraces } from '../helpers/traces';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Whether what `make` returns is collected once nothing refers to it (a WeakRef lives to the end of its job). */
async function collected(make: () => Promise<object>): Promise<boolean> {
  let ref: WeakRef<object> | undefined = new WeakRef(await make());
  for (let i = 0; i < 5 && ref.deref(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    gc();
  }
  const gone = ref.deref() === undefined;
  ref = undefined;
  return gone;
}

describe('the native scanner lets go of an import', () => {
  const trace = realTraces().find((t) => t.endsWith('tracelens_b200x8_eager.trace.json.gz'))!;
  const file = path.join(ROOT, trace);

  it('is built here, so the imports below go through it', () => {
    expect(nativeScanAvailable()).toBe(true);
    expect(
      typeof new (loadAddon().KinetoScanner!)({
        instantKind: 0,
        otherKind: 0,
        intern: () => 0,
        track: () => 0,
        kind: () => 0,
      }).release,
    ).toBe('function');
  });

  it('a trace read from disk: its profile is collected', async () => {
    let slices = 0;
    const gone = await collected(async () => {
      const profile: Profile = await importTrace(file, { parser: 'native' });
      slices = profile.slices.length;
      return profile;
    });
    expect(slices).toBeGreaterThan(1000);
    expect(gone).toBe(true);
  });

  it('a trace read from memory: its profile is collected', async () => {
    const { gunzipSync } = await import('node:zlib');
    const text = gunzipSync(readFileSync(file));
    expect(await collected(async () => importTraceBytes('t.json', text, { parser: 'native' }))).toBe(true);
  });

  it('a failed import (truncated JSON) leaves nothing either', async () => {
    const { gunzipSync } = await import('node:zlib');
    const half = gunzipSync(readFileSync(file));
    let message = '';
    // The importer keeps its options: they are collected only if the importer is.
    const gone = await collected(async () => {
      const options: ImportOptions = { parser: 'native' };
      try {
        importTraceBytes('half.json', half.subarray(0, Math.floor(half.length / 2)), options);
      } catch (error) {
        message = (error as Error).message;
      }
      return options;
    });
    expect(message).toMatch(/half\.json.*truncated/);
    expect(gone).toBe(true);
  });

  it('a released scanner refuses to scan again, with a clear error', () => {
    const scanner = new (loadAddon().KinetoScanner!)({
      instantKind: 0,
      otherKind: 0,
      intern: () => 0,
      track: () => 0,
      kind: () => 0,
    });
    scanner.release!();
    expect(() => scanner.scan(new Uint8Array(4), 0, 4, new Float64Array(32))).toThrow(/released/);
  });
});
