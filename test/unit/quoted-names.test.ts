/**
 * torch 2.13 writes one frame name unescaped (`"name": "…_cupti_monitor.py(0): "segment"",`) when the profiler's
 * lazily imported CUPTI monitor is imported inside the window: no JSON parser reads such a trace. The importer
 * reads the name as written and says so once; a trace broken any other way is still refused with its place.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importTrace } from '../../extension/import/kineto';

const dir = mkdtempSync(path.join(os.tmpdir(), 'flagprof-quoted-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BROKEN = 'torch/profiler/_cupti_monitor.py(0): "segment"';

function trace(name: string, events: string[]): string {
  const file = path.join(dir, name);
  writeFileSync(file, `{"schemaVersion": 1, "traceEvents": [\n${events.join(',\n')}\n], "traceName": "t"}\n`);
  return file;
}

const op = (name: string, ts: number, pid = 1): string =>
  `{"ph": "X", "cat": "python_function", "name": "${name}", "pid": ${pid}, "tid": 1, "ts": ${ts}, "dur": 5, "args": {"Python id": ${ts}}}`;

describe('names with unescaped quotes', () => {
  it("reads torch 2.13's _cupti_monitor frame as written, every other event as usual, with one warning", async () => {
    const file = trace('torch213.json', [
      op('train.py(3): <module>', 0),
      op(BROKEN, 10),
      // A name with its own escaped quotes stays as JSON has it.
      op('say \\"hi\\"', 20),
      `{"ph": "X", "cat": "python_function", "name": "${BROKEN}"   , "pid": 1, "tid": 1, "ts": 30, "dur": 1}`,
      `{"ph": "i", "name": "${BROKEN}"}`.replace('}', ', "pid": 1, "tid": 1, "ts": 40, "s": "t"}'),
    ]);
    expect(() => JSON.parse(readFileSync(file, 'utf8'))).toThrow();
    const profile = await importTrace(file);
    const names = Array.from({ length: profile.slices.length }, (_, i) => profile.nameOf(i));
    expect(names).toEqual(['train.py(3): <module>', BROKEN, 'say "hi"', BROKEN, BROKEN]);
    const warnings = profile.warnings.map((w) => w.message).filter((m) => m.includes('unescaped quotes'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^3 event name\(s\) hold unescaped quotes, read as written \(the first: /);
  });

  it('a quote that breaks anything other than a name is still an error naming the file and the byte', async () => {
    const file = trace('broken.json', [
      op('a', 0),
      `{"ph": "X", "cat": "cpu_op "x"", "name": "n", "pid": 1, "tid": 1, "ts": 5, "dur": 1}`,
    ]);
    await expect(importTrace(file)).rejects.toThrow(/broken\.json.*at byte \d+/);
  });

  it('a name whose quotes never find their end is refused, not scanned to the end of the file', async () => {
    const file = trace('runaway.json', [
      `{"ph": "X", "cat": "x", "name": "a"b` +
        'c'.repeat(20_000) +
        `, "pid": 1, "tid": 1, "ts": 5, "dur": 1}`,
    ]);
    await expect(importTrace(file)).rejects.toThrow(/runaway\.json/);
  });
});
