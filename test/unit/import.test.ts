import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ImportError, importTrace, importTraceBytes } from '../../extension/import/kineto';
import { SliceKind } from '../../extension/model/profile';
import { ROOT, manifestFacts, realTraces, tracePath } from '../helpers/traces';

const enc = (text: string) => new TextEncoder().encode(text);

describe('every real trace imports', () => {
  const facts = manifestFacts();
  for (const trace of realTraces()) {
    it(path.basename(trace), async () => {
      const profile = await importTrace(path.join(ROOT, trace));
      const key = trace
        .split(path.sep)
        .slice(-2)
        .join('/')
        .replace(/^traces\//, '');
      const fact = facts.get(key) ?? facts.get(path.basename(trace));
      expect(fact, `MANIFEST entry for ${key}`).toBeDefined();
      // Every event is read; complete and instant events become slices, s/f/t halves become flows.
      expect(profile.eventCount).toBe(fact!.events);
      expect(profile.slices.length).toBe((fact!.ph.X ?? 0) + (fact!.ph.i ?? 0));
      expect(profile.flows.length).toBe((fact!.ph.s ?? 0) + (fact!.ph.f ?? 0) + (fact!.ph.t ?? 0));
      expect(profile.originNs > 10n ** 15n || trace.includes('mtia')).toBe(true);
      for (let i = 0; i < profile.slices.length; i++) {
        expect(profile.slices.start[i]).toBeGreaterThanOrEqual(0);
      }
      // Only the 2021 trace carries Call stacks with frames (2022's are all ""); none is malformed.
      expect(profile.sites !== undefined).toBe(trace.includes('kineto_tbplugin_2021'));
      expect(profile.warnings.filter((w) => /Call stack/.test(w.message))).toEqual([]);
    });
  }
});

describe('timestamp forms', () => {
  it('integer absolute microseconds keep nanosecond exactness past 2^53', () => {
    const p = importTraceBytes(
      't.json',
      enc(
        '[{"ph":"X","name":"a","cat":"cpu_op","pid":1,"tid":1,"ts":1694039968933321,"dur":5},' +
          '{"ph":"X","name":"b","cat":"cpu_op","pid":1,"tid":1,"ts":1694039968933324,"dur":1}]',
      ),
    );
    expect(p.originNs).toBe(1694039968933321000n);
    expect(p.slices.start[1]).toBe(3000);
    expect(p.slices.dur[0]).toBe(5000);
  });

  it('float relative to baseTimeNanoseconds, even when the base comes after the events', () => {
    const p = importTraceBytes(
      't.json',
      enc(
        '{"traceEvents":[{"ph":"X","name":"a","cat":"kernel","pid":0,"tid":7,"ts":2413668742269.099,"dur":1.5}],' +
          '"baseTimeNanoseconds":1727743122000000000}',
      ),
    );
    expect(p.originNs).toBe(1727743122000000000n + 2413668742269099n);
    expect(p.slices.dur[0]).toBe(1500);
  });

  it('Ascend string timestamps with a nanosecond fraction', () => {
    const p = importTraceBytes(
      't.json',
      enc(
        '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":"1704161511420306.491","dur":2.5},' +
          '{"ph":"X","name":"b","pid":1,"tid":1,"ts":"1704161511420307.000","dur":1}]',
      ),
    );
    expect(p.originNs).toBe(1704161511420306491n);
    expect(p.slices.start[1]).toBeCloseTo(509, 6);
  });

  it('float absolute microseconds with a fraction', () => {
    const p = importTraceBytes(
      't.json',
      enc('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1704161511420306.5,"dur":1}]}'),
    );
    expect(p.originNs).toBe(1704161511420306500n);
  });
});

describe('tolerance', () => {
  it('reads the same model whatever the chunk boundaries', async () => {
    const file = tracePath('hta_a100_event_sync_multi_stream.trace.json.gz');
    const bytes = gunzipSync(readFileSync(path.join(ROOT, file)));
    const whole = importTraceBytes(file, bytes);
    for (const chunkSize of [1, 7, 64, 4096]) {
      const chunked = importTraceBytes(file, bytes, { chunkSize });
      expect(chunked.slices.length).toBe(whole.slices.length);
      expect(Array.from(chunked.slices.start.subarray(0, chunked.slices.length))).toEqual(
        Array.from(whole.slices.start.subarray(0, whole.slices.length)),
      );
      expect(chunked.strings.all()).toEqual(whole.strings.all());
    }
  });

  it('pretty-printed, gzipped and plain files give the same profile', async () => {
    const file = tracePath('kineto_tbplugin_gpu_metrics_input.json');
    const plain = await importTrace(path.join(ROOT, file));
    const bytes = readFileSync(path.join(ROOT, file));
    const pretty = importTraceBytes('p.json', enc(JSON.stringify(JSON.parse(bytes.toString()), null, 4)));
    const zipped = importTraceBytes('z.json', gunzipSync(gzipSync(bytes)));
    expect(pretty.slices.length).toBe(plain.slices.length);
    expect(zipped.slices.length).toBe(plain.slices.length);
    expect(pretty.flows.length).toBe(plain.flows.length);
  });

  it('string pids and tids, unsorted events, duplicated and missing metadata', () => {
    const p = importTraceBytes(
      't.json',
      enc(
        JSON.stringify({
          traceEvents: [
            { ph: 'X', name: 'late', cat: 'cpu_op', pid: 'Spans', tid: 'stream 7', ts: 30, dur: 1 },
            { ph: 'M', name: 'process_name', pid: 'Spans', tid: 0, args: { name: 'Spans' } },
            { ph: 'M', name: 'process_name', pid: 'Spans', tid: 0, args: { name: 'Spans' } },
            { ph: 'X', name: 'early', cat: 'cpu_op', pid: 'Spans', tid: 'stream 7', ts: 10, dur: 1 },
            { ph: 'X', name: 'other', cat: 'cpu_op', pid: 3, tid: '', ts: 20, dur: 1 },
          ],
        }),
      ),
    );
    expect(p.tracks.map((t) => [t.pid, t.tid, t.processName])).toEqual([
      ['Spans', 'stream 7', 'Spans'],
      ['3', '', 'Process 3'],
    ]);
    const order = p.byTrack.order.subarray(p.byTrack.offsets[0], p.byTrack.offsets[1]);
    expect(Array.from(order, (i) => p.nameOf(i))).toEqual(['early', 'late']);
  });

  it('repeated metadata: the last value each process and thread was given wins, whatever repeats came between', () => {
    // Torch repeats its metadata; repeats are dropped unread, so the order of the values that differ must hold:
    // process 0 (also the process of an event without a pid) ends as "A", thread 1 of process 1 as "main".
    const events = [
      { ph: 'X', name: 'op', cat: 'cpu_op', pid: 0, tid: 0, ts: 1, dur: 1 },
      { ph: 'X', name: 'op', cat: 'cpu_op', pid: 1, tid: 1, ts: 1, dur: 1 },
      { ph: 'M', name: 'process_name', pid: 0, tid: 0, args: { name: 'A' } },
      { ph: 'M', name: 'process_name', tid: 5, args: { name: 'B' } },
      { ph: 'M', name: 'process_name', pid: 0, tid: 0, args: { name: 'A' } },
      { ph: 'M', name: 'process_sort_index', pid: 0, args: { sort_index: 3 } },
      { ph: 'M', name: 'process_sort_index', pid: 0, args: { sort_index: 3 } },
      { ph: 'M', name: 'thread_name', pid: 1, tid: 1, args: { name: 'main' } },
      { ph: 'M', name: 'thread_name', pid: 1, tid: 1, args: { name: 'worker' } },
      { ph: 'M', name: 'thread_name', pid: 1, tid: 2, args: { name: 'main' } },
      { ph: 'M', name: 'thread_name', pid: 1, tid: 1, args: { name: 'main' } },
    ];
    for (const parser of ['native', 'js'] as const) {
      const p = importTraceBytes('t.json', enc(JSON.stringify({ traceEvents: events })), { parser });
      expect(
        p.tracks.map((t) => [t.pid, t.tid, t.processName, t.name, t.processSortIndex]),
        parser,
      ).toEqual([
        ['0', '0', 'A', 'Thread 0', 3],
        ['1', '1', 'Process 1', 'main', Number.NaN],
      ]);
    }
  });

  it('bare non-JSON metadata values import with a warning naming the key and the event', () => {
    const p = importTraceBytes(
      't.json',
      enc(
        '{"traceEvents":[{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":10,"dur":5,' +
          '"args":{"memory kind": N/A, "correlation": 3, "bandwidth": 8e-05}}]}',
      ),
    );
    expect(p.slices.length).toBe(1);
    expect(p.slices.correlation[0]).toBe(3);
    expect(p.warnings.map((w) => w.message).join('\n')).toMatch(/N\/A for "memory kind" in event "gemm"/);
    expect(p.argsOf(0)).toEqual({ 'memory kind': 'N/A', correlation: 3, bandwidth: 8e-5 });
  });

  it('keeps External id 0 distinct from no External id', () => {
    const p = importTraceBytes(
      't.json',
      enc(
        '[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":5,"args":{"External id":0}},' +
          '{"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":2,"dur":1}]',
      ),
    );
    expect(p.slices.externalId[0]).toBe(0);
    expect(Number.isNaN(p.slices.externalId[1])).toBe(true);
  });

  it('nests slices by time on each track and binds flow halves to slices', async () => {
    const p = await importTrace(path.join(ROOT, tracePath('hta_a100_simple_add.trace.json.gz')));
    let bound = 0;
    for (let f = 0; f < p.flows.length; f++) if (p.flows.slice[f] >= 0) bound++;
    expect(bound).toBe(p.flows.length);
    for (let i = 0; i < p.slices.length; i++) {
      const parent = p.slices.parent[i];
      if (parent < 0) continue;
      expect(p.slices.track[parent]).toBe(p.slices.track[i]);
      expect(p.slices.start[parent]).toBeLessThanOrEqual(p.slices.start[i]);
      expect(p.slices.depth[i]).toBe(p.slices.depth[parent] + 1);
    }
    expect(p.tracks.some((t) => t.kind === 'device')).toBe(true);
  });

  it('classifies Ascend events that have no category by their process', async () => {
    const p = await importTrace(path.join(ROOT, tracePath('ascend_npu_trace_view.json')));
    const kinds = new Set<number>();
    for (let i = 0; i < p.slices.length; i++)
      if (p.tracks[p.slices.track[i]].processName === 'Ascend Hardware') kinds.add(p.slices.kind[i]);
    expect(kinds.has(SliceKind.Kernel)).toBe(true);
  });
});

describe('bad input: one line naming the file, the offset and what was expected', () => {
  const cases: [string, Uint8Array, RegExp][] = [
    ['empty.json', new Uint8Array(0), /empty\.json: empty file.*at byte 0/],
    ['text.json', enc('hello'), /text\.json: invalid JSON: expected '\{' or '\['.*at byte 0/],
    ['object.json', enc('{"a": 1}'), /object\.json: not a trace/],
    [
      'truncated.json',
      enc('{"traceEvents":[{"ph":"X","name":"a"'),
      /truncated\.json: truncated JSON: expected an event object.*at byte 16/,
    ],
    ['array.json', enc('[1,2]'), /array\.json: invalid JSON: expected an event object.*at byte 1/],
    ['garbage.json', enc('{"traceEvents":[{"ph":"X" "name":"a"}]}'), /garbage\.json: invalid JSON/],
  ];
  for (const [name, bytes, pattern] of cases) {
    it(name, () => {
      let error: unknown;
      try {
        importTraceBytes(name, bytes);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ImportError);
      expect((error as Error).message).toMatch(pattern);
      expect((error as Error).message).not.toContain('\n');
    });
  }

  it('truncated and corrupt gzip', async () => {
    const file = path.join(ROOT, tracePath('hta_a100_simple_add.trace.json.gz'));
    const bytes = readFileSync(file);
    const dir = execFileSync('mktemp', ['-d']).toString().trim();
    const truncated = path.join(dir, 'cut.json.gz');
    const corrupt = path.join(dir, 'bad.json.gz');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(truncated, bytes.subarray(0, 5000));
    const damaged = Buffer.from(bytes);
    damaged.fill(0xff, 3000, 3100);
    writeFileSync(corrupt, damaged);
    await expect(importTrace(truncated)).rejects.toThrow(/cut\.json\.gz: truncated gzip stream/);
    await expect(importTrace(corrupt)).rejects.toThrow(
      /bad\.json\.gz: (corrupt gzip data|invalid JSON|truncated)/,
    );
  });

  it('the CLI prints one line and exits 2, with no stack trace', () => {
    const result = spawnSync(
      process.execPath,
      [path.join(ROOT, 'bin/flagprof.js'), 'summary', 'no-such-trace.json'],
      { encoding: 'utf8' },
    );
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/no-such-trace\.json: no such file/);
  });
});
