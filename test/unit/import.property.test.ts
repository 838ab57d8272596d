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

describe('Call stack args (2021 traces)', () => {
  const userFiles = ['train.py', 'src/my model (v2).py', 'C:\\work\\main.py', 'café/ü.py'];
  const libraryFiles = [
    '/env/lib/python3.10/site-packages/torch/nn/modules/module.py',
    '/usr/lib/python3.8/runpy.py',
    '/src/pytorch/torch/autograd/grad_mode.py',
    '/opt/conda/lib/python3.7/dist-packages/torchvision/transforms.py',
  ];
  const frame = fc.record({
    user: fc.boolean(),
    pick: fc.nat(3),
    line: fc.integer({ min: 0, max: 100000 }),
    function: fc.stringMatching(/^[A-Za-z_<>][\w<> .]{0,10}$/),
  });
  const stack = fc.oneof(
    { weight: 4, arbitrary: fc.array(frame, { maxLength: 6 }) },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  );

  it('each op gets exactly its user frames, or its stack counts in the one warning, whatever the chunks', () => {
    fc.assert(
      fc.property(
        fc.array(stack, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 400 }),
        (stacks, chunk) => {
          const expected = new Map<
            number,
            { file: string; line: number; function: string; kind: 'trace' }[]
          >();
          const events = stacks.map((s, ext) => {
            let text: string;
            if (typeof s === 'string') text = s;
            else {
              text = s
                .map((f) => `${(f.user ? userFiles : libraryFiles)[f.pick]}(${f.line}): ${f.function}`)
                .join(';');
              const user = s
                .filter((f) => f.user)
                .map((f) => ({
                  file: userFiles[f.pick],
                  line: f.line,
                  function: f.function,
                  kind: 'trace' as const,
                }));
              if (user.length > 0) expected.set(ext, user);
            }
            const args = { 'External id': ext, 'Call stack': text };
            return { ph: 'X', cat: 'cpu_op', name: 'op', pid: 1, tid: 1, ts: ext * 10, dur: 5, args };
          });
          const bytes = new TextEncoder().encode(JSON.stringify({ traceEvents: events }));
          const profile = importTraceBytes('t.json', bytes, { chunkSize: chunk });
          const warned = profile.warnings.filter((w) => /Call stack/.test(w.message));
          expect(warned.length).toBeLessThanOrEqual(1);
          const malformed = warned.length ? Number(/^(\d+) op/.exec(warned[0].message)![1]) : 0;
          const sites = profile.sites ?? new Map();
          // Generated frames always parse: only random text can be malformed, and then it has no site.
          for (const [ext, chain] of expected) expect(sites.get(ext)).toEqual(chain);
          const randomText = stacks.filter((s) => typeof s === 'string').length;
          expect(sites.size - expected.size + malformed).toBeLessThanOrEqual(randomText);
          expect(malformed).toBeLessThanOrEqual(randomText);
        },
      ),
      { numRuns: 200 },
    );
  });
});
