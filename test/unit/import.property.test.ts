import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { ImportError, importTraceBytes } from '../../extension/import/kineto';
import { ROOT, tracePath } from '../helpers/traces';

const sources = [
  'hta_a100_event_sync_multi_stream.trace.json.gz',
  'hta_a100_triton_example.trace.json.gz',
  'kineto_tbplugin_gpu_metrics_input.json',
].map((name) => {
  const raw = readFileSync(path.join(ROOT, tracePath(name)));
  return { name, bytes: name.endsWith('.gz') ? gunzipSync(raw) : raw };
});

/** Either a profile that analysis can read, or one clear ImportError line — never anything else. */
function importsOrFailsClearly(name: string, bytes: Uint8Array, chunkSize: number): void {
  try {
    const profile = importTraceBytes(name, bytes, { chunkSize });
    analyze(profile);
  } catch (error) {
    expect(error).toBeInstanceOf(ImportError);
    const message = (error as Error).message;
    expect(message.startsWith(`${name}: `)).toBe(true);
    expect(message).not.toContain('\n');
  }
}

describe('truncated and mutated real traces', () => {
  it('truncation at any byte', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...sources),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 70000 }),
        (source, at, chunk) => {
          const cut = source.bytes.subarray(0, Math.floor(at * source.bytes.length));
          importsOrFailsClearly(source.name, cut, chunk);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('random byte mutations', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...sources),
        fc.array(
          fc.tuple(
            fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
            fc.integer({ min: 0, max: 255 }),
          ),
          { minLength: 1, maxLength: 12 },
        ),
        fc.integer({ min: 1, max: 70000 }),
        (source, edits, chunk) => {
          const bytes = Uint8Array.from(source.bytes);
          for (const [where, value] of edits) bytes[Math.floor(where * bytes.length)] = value;
          importsOrFailsClearly(source.name, bytes, chunk);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('structural characters inserted where they break nesting', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...sources),
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        fc.constantFrom('{', '}', '[', ']', '"', ',', ':', '\\', 'N/A', '\u0000'),
        (source, where, insert) => {
          const at = Math.floor(where * source.bytes.length);
          const text = new TextEncoder().encode(insert);
          const bytes = new Uint8Array(source.bytes.length + text.length);
          bytes.set(source.bytes.subarray(0, at));
          bytes.set(text, at);
          bytes.set(source.bytes.subarray(at), at + text.length);
          importsOrFailsClearly(source.name, bytes, 4096);
        },
      ),
      { numRuns: 150 },
    );
  });
});
