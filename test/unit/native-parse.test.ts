/**
 * The native parse path (the addon's Kineto scanner) against the TypeScript parser it must equal: the same model,
 * byte for byte, on every real trace, at every chunk boundary, and on generated traces full of what the parser
 * tolerates, warns about or refuses.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { importTrace, importTraceBytes, type ImportOptions } from '../../extension/import/kineto';
import { nativeScanAvailable } from '../../extension/import/nativeScan';
import { profileBytes } from '../helpers/profileBytes';
import { ROOT, realTraces } from '../helpers/traces';

function bytesOf(trace: string): Buffer {
  const raw = readFileSync(path.join(ROOT, trace));
  return raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw;
}

/** The model, or the error's message: what a user gets from either path. */
function outcome(name: string, bytes: Uint8Array, options: ImportOptions & { chunkSize?: number }) {
  try {
    return profileBytes(importTraceBytes(name, bytes, options));
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe('native parse path', () => {
  it('is built here (npm ci builds the addon), so the comparisons below compare two parsers', () => {
    expect(nativeScanAvailable()).toBe(true);
  });

  const traces = realTraces();
  it('finds the real traces', () => expect(traces.length).toBeGreaterThanOrEqual(30));

  for (const trace of traces) {
    it(`makes the same model as the TypeScript parser: ${path.basename(trace)}`, async () => {
      const file = path.join(ROOT, trace);
      const js = profileBytes(await importTrace(file, { parser: 'js' }));
      const native = profileBytes(await importTrace(file, { parser: 'native' }));
      expect(native).toEqual(js);
      expect(native.slices as number).toBeGreaterThan(0);
    });
  }

  it('at every kind of chunk boundary', () => {
    for (const name of [
      'hta_a100_event_sync_multi_stream.trace.json.gz',
      'kineto_tbplugin_gpu_metrics_input.json',
      'ascend_npu_trace_view.json',
    ]) {
      const trace = traces.find((t) => t.endsWith(name))!;
      const bytes = bytesOf(trace);
      for (const chunkSize of [1, 7, 61, 4093]) {
        const js = outcome(name, bytes, { parser: 'js', chunkSize });
        expect(
          outcome(name, bytes, { parser: 'native', chunkSize }),
          `${name} in chunks of ${chunkSize}`,
        ).toEqual(js);
      }
    }
  });

  it('with the limits met mid-trace', () => {
    const trace = traces.find((t) => t.endsWith('hta_a100_simple_add.trace.json.gz'))!;
    const bytes = bytesOf(trace);
    for (const options of [{ maxSlices: 100 }, { maxEvents: 250 }, { maxValueBytes: 300 }]) {
      const js = outcome('t.json', bytes, { parser: 'js', ...options });
      expect(js.error, JSON.stringify(options)).toMatch(/too large|longer than/);
      expect(outcome('t.json', bytes, { parser: 'native', ...options })).toEqual(js);
    }
  });
});

// Event texts: the regular ones the scanner reads, and every irregular one it must hand back.
const name = fc.constantFrom(
  '"aten::mm"',
  '"void at::native::kernel<float>(int)"',
  '"\\u0041ten::add"',
  '"with \\"escaped\\" quotes"',
  '"a.py(0): "segment""',
  '"ProfilerStep#3"',
  '"ünïcode ✓"',
  '""',
  '17',
);
const cat = fc.constantFrom(
  '"cpu_op"',
  '"kernel"',
  '"cuda_runtime"',
  '"Operator"',
  '"gpu_memcpy"',
  '"ac2g"',
  '"user_annotation"',
  'null',
  '"python_function"',
);
const ts = fc.oneof(
  fc.integer({ min: 0, max: 1e9 }).map(String),
  fc.double({ min: 0, max: 1e6, noNaN: true }).map((v) => v.toFixed(3)),
  fc.constantFrom('"1234.5"', '1.5e3', '"abc"', '-3.25', '0x10', '"  1"', '1712345678901234.567', '""'),
);
const ids = fc.oneof(
  fc.integer({ min: -2, max: 50 }).map(String),
  fc.constantFrom('"7"', '"stream 7"', 'N/A', '1.5', '1e2', '"x"'),
);
const args = fc.oneof(
  fc
    .record({ ext: ids, corr: ids })
    .map(({ ext, corr }) => `{"External id": ${ext}, "correlation": ${corr}}`),
  fc.constantFrom(
    '{}',
    '{ }',
    'null',
    '{"external id": 4, "External id": 5}',
    '{"Call stack": "train.py(12): main;lib.py(3): f"}',
    '{"Call stack": null, "External id": 3}',
    '{"Call stack": 12, "External id": 3}',
    '{"Call stack": "", "External id": 3}',
    '{"Call site": "train.py:3:1", "External id": 9}',
    '{"nested": {"a": [1, 2, {"b": "c"}]}, "External id": 2}',
    '{"bare": N/A}',
    '{"Input Dims": [[1, 2], []], "Input type": ["float"]}',
    '{"External id": 1e3}',
    '{"key" "missing colon"}',
    '{"a": 1,, "b": 2}',
  ),
);
const ph = fc.constantFrom(
  '"X"',
  '"X"',
  '"X"',
  '"i"',
  '"I"',
  '"n"',
  '"s"',
  '"f"',
  '"t"',
  '"M"',
  '"B"',
  '"E"',
  '"C"',
  '"b"',
  '"e"',
  'X',
  '""',
  '"P"',
);
const key = (k: string, v: fc.Arbitrary<string>) => v.map((value) => `"${k}": ${value}`);
const event = fc
  .tuple(
    key('ph', ph),
    fc.option(key('name', name)),
    fc.option(key('cat', cat)),
    fc.option(key('pid', ids)),
    fc.option(key('tid', ids)),
    fc.option(key('ts', ts)),
    fc.option(key('dur', ts)),
    fc.option(key('id', ids)),
    fc.option(key('args', args)),
    fc.option(fc.constantFrom('"bp": "e"', '"extra": [1, {"x": true}]', '"odd": N/A', '"ts": 5')),
    fc.boolean(),
  )
  .map(([first, ...rest]) => {
    const shuffle = rest.pop() as boolean;
    const fields = [first, ...(rest as (string | null)[]).filter((f): f is string => f !== null)];
    if (shuffle) fields.reverse();
    return `{${fields.join(', ')}}`;
  });
const separator = fc.constantFrom(',', ',\n', ' , ', ',,', ',\r\n\t');

describe('native parse path on generated traces', () => {
  it('makes the same model, warnings and errors as the TypeScript parser', () => {
    fc.assert(
      fc.property(
        fc.array(event, { minLength: 1, maxLength: 40 }),
        separator,
        fc.integer({ min: 1, max: 600 }),
        fc.boolean(),
        (events, sep, chunkSize, array) => {
          const body = events.join(sep);
          const text = array
            ? `[${body}]`
            : `{"schemaVersion": 1, "traceEvents": [${body}], "baseTimeNanoseconds": 1712345678000000000}`;
          const bytes = Buffer.from(text);
          const js = outcome('gen.json', bytes, { parser: 'js', chunkSize });
          const native = outcome('gen.json', bytes, { parser: 'native', chunkSize });
          expect(native).toEqual(js);
        },
      ),
      { numRuns: 400 },
    );
  });
});
