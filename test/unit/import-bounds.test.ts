/**
 * Imports are bounded by the machine: decompressed bytes are counted over every gzip member, events and single
 * values have limits, and each refusal is one line naming the limit, exit 2, before memory runs out. The bombs
 * are built here at test time, streamed through zlib so the test itself stays small.
 */
import { once } from 'node:events';
import { createWriteStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createGzip, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportError, importTrace, importTraceBytes } from '../../extension/import/kineto';
import { availableMemory, resolveLimits } from '../../extension/import/limits';
import { SliceKind } from '../../extension/model/profile';
import { buildCli, cleanupCliRuns, lines, makeTempDir, runCli } from '../helpers/cli';

const temp = makeTempDir('bounds');
const dir = temp.dir;
beforeAll(() => buildCli());
afterAll(() => {
  temp.remove();
  cleanupCliRuns();
});

const EVENT = '{"ph":"X","cat":"kernel","ts":1,"dur":1,"name":"k","pid":1,"tid":1}';

/** Writes `count` copies of `text` (after `head`, before `tail`) through a streaming gzip: one member. */
async function gzipFile(
  file: string,
  head: string,
  text: string,
  count: number,
  tail: string,
): Promise<void> {
  const out = createWriteStream(file);
  const gzip = createGzip({ level: 1 });
  gzip.pipe(out);
  const write = async (chunk: string | Buffer) => {
    if (!gzip.write(chunk)) await once(gzip, 'drain');
  };
  await write(head);
  // Whole megabytes at a time: the test never holds more than one.
  const perChunk = Math.max(1, Math.floor(2 ** 20 / text.length));
  const chunk = Buffer.from(text.repeat(perChunk));
  let left = count;
  for (; left >= perChunk; left -= perChunk) await write(chunk);
  if (left > 0) await write(text.repeat(left));
  await write(tail);
  gzip.end();
  await once(out, 'close');
}

describe('decompressed bytes are counted over every gzip member', () => {
  const file = path.join(dir, 'members.json.gz');
  const big = 400_000; // about 27 MB of text in the first member
  beforeAll(async () => {
    await gzipFile(file, '{"traceEvents":[', `${EVENT},`, big, '');
    // A last member of a few bytes: its size trailer (ISIZE) says nothing about the members before it.
    writeFileSync(file, Buffer.concat([readFileSync(file), gzipSync(`${EVENT}]}`)]));
  });

  it('a multi-member gzip whose last member is tiny is refused at the byte limit, in bounded time and memory', async () => {
    const bytes = readFileSync(file);
    expect(bytes.readUInt32LE(bytes.length - 4)).toBeLessThan(100);
    const result = await runCli(['summary', file], { env: { FLAGPROF_MAX_TRACE_BYTES: '4M' } });
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      `flagprof: ${file}: too large: more than 4.0 MB of trace text (the limit from FLAGPROF_MAX_TRACE_BYTES); sample the run with a shorter profiling window`,
    ]);
    expect(result.stdout).toBe('');
    expect(result.ms).toBeLessThan(15_000);
    expect(result.peakRssMB).toBeLessThan(250);
  });

  it('under the default limits the same file imports, every member read', async () => {
    const profile = await importTrace(file);
    expect(profile.eventCount).toBe(big + 1);
    expect(profile.slices.length).toBe(big + 1);
  });
});

describe('one value the parser must hold', () => {
  const file = path.join(dir, 'name.json.gz');
  beforeAll(async () => {
    // One event whose name is 256 MB of text: about 250 KB compressed.
    await gzipFile(
      file,
      '{"traceEvents":[{"ph":"X","ts":1,"dur":1,"name":"',
      'A'.repeat(4096),
      65_536,
      '"}]}',
    );
    expect(statSync(file).size).toBeLessThan(2 ** 21);
  });

  it('is refused at the default limit (64 MB), holding about twice that at most', async () => {
    const result = await runCli(['summary', file]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      `flagprof: ${file}: one event longer than 64.0 MB, from byte 16 (the limit; FLAGPROF_MAX_VALUE_BYTES changes it)`,
    ]);
    expect(result.ms).toBeLessThan(30_000);
    expect(result.peakRssMB).toBeLessThan(450);
  });

  it('is refused at a limit from the environment', async () => {
    const result = await runCli(['summary', file], { env: { FLAGPROF_MAX_VALUE_BYTES: '4M' } });
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      `flagprof: ${file}: one event longer than 4.0 MB, from byte 16 (the limit from FLAGPROF_MAX_VALUE_BYTES)`,
    ]);
    expect(result.peakRssMB).toBeLessThan(250);
  });

  it('a top-level field too large to keep is streamed past, not held', async () => {
    const plain = path.join(dir, 'system-trace.json');
    const events = Array.from({ length: 3 }, (_, i) => EVENT.replace('"ts":1', `"ts":${i + 1}`)).join(',');
    writeFileSync(plain, `{"systemTraceEvents":"${'x'.repeat(12 * 2 ** 20)}","traceEvents":[${events}]}`);
    const profile = await importTrace(plain, { maxValueBytes: 8 * 2 ** 20 });
    expect(profile.slices.length).toBe(3);
    expect(profile.metadata).not.toHaveProperty('systemTraceEvents');
    // Cut inside the skipped field: still a truncation naming the field.
    writeFileSync(plain, `{"systemTraceEvents":"${'x'.repeat(12 * 2 ** 20)}`);
    await expect(importTrace(plain)).rejects.toThrow(
      /truncated JSON: expected the value of "systemTraceEvents" \(at byte \d+\)$/,
    );
  });
});

describe('event and byte limits', () => {
  const file = path.join(dir, 'events.json');
  beforeAll(() => {
    writeFileSync(file, `{"traceEvents":[${Array.from({ length: 5000 }, () => EVENT).join(',')}]}`);
  });

  it('more events than FLAGPROF_MAX_EVENTS: one line naming the limit', async () => {
    const result = await runCli(['summary', file], { env: { FLAGPROF_MAX_EVENTS: '1000' } });
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      `flagprof: ${file}: too large: more than 1,000 events (the limit from FLAGPROF_MAX_EVENTS); sample the run with a shorter profiling window`,
    ]);
  });

  it('a plain file over the byte limit is refused from its size, before it is read', async () => {
    await expect(importTrace(file, { maxTraceBytes: 1000 })).rejects.toThrow(
      `${file}: too large: more than 1000 bytes of trace text (the limit set by the caller)`,
    );
    expect(() => importTraceBytes('t.json', readFileSync(file), { maxTraceBytes: 1000 })).toThrow(
      ImportError,
    );
    expect(() => importTraceBytes('t.json', readFileSync(file), { maxEvents: 10 })).toThrow(
      't.json: too large: more than 10 events (the limit set by the caller)',
    );
  });

  it('memory growth past FLAGPROF_MAX_MEMORY is refused', async () => {
    const larger = path.join(dir, 'larger.json');
    writeFileSync(larger, `{"traceEvents":[${Array.from({ length: 60_000 }, () => EVENT).join(',')}]}`);
    const result = await runCli(['summary', larger], { env: { FLAGPROF_MAX_MEMORY: '1' } });
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(
      /^flagprof: .*larger\.json: too large for the memory available: the import took .+ \(the limit, 1 bytes, from FLAGPROF_MAX_MEMORY\); sample the run/,
    );
  });

  it('a malformed limit is one line naming the variable', async () => {
    const result = await runCli(['summary', file], { env: { FLAGPROF_MAX_EVENTS: 'lots' } });
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      `flagprof: ${file}: FLAGPROF_MAX_EVENTS="lots" is not a count (as 5000000 or 5M)`,
    ]);
  });

  it('defaults derive from the memory available; sizes and counts take units', () => {
    const defaults = resolveLimits('t.json', {}, {});
    const available = availableMemory();
    expect(defaults.traceBytes.from).toBe('memory');
    expect(defaults.traceBytes.value).toBeGreaterThan(0);
    expect(defaults.traceBytes.value).toBeLessThan(available);
    expect(defaults.events.value).toBeLessThan(available / 100);
    expect(defaults.valueBytes.value).toBe(64 * 2 ** 20);
    const set = resolveLimits(
      't.json',
      { maxMemoryBytes: 123 },
      { FLAGPROF_MAX_TRACE_BYTES: '1.5G', FLAGPROF_MAX_EVENTS: '5M', FLAGPROF_MAX_VALUE_BYTES: '64KiB' },
    );
    expect(set.traceBytes).toEqual({
      value: 1.5 * 2 ** 30,
      variable: 'FLAGPROF_MAX_TRACE_BYTES',
      from: 'environment',
    });
    expect(set.events.value).toBe(5_000_000);
    expect(set.valueBytes.value).toBe(65_536);
    expect(set.memoryBytes).toMatchObject({ value: 123, from: 'option' });
  });
});

describe('timestamps that are not numbers', () => {
  const enc = (text: string) => new TextEncoder().encode(text);
  const x = (ts: string, name: string, dur = '1') => `{"ph":"X","ts":${ts},"dur":${dur},"name":"${name}"}`;

  it('are dropped, counted and reported: NaN, Infinity, "abc", 0x10 and trailing text are not times', () => {
    const events = [
      x('10', 'good'),
      x('"20.5"', 'quoted'),
      x('3e1', 'exponent'),
      x('NaN', 'nan'),
      x('Infinity', 'inf'),
      x('"abc"', 'abc'),
      x('0x10', 'hex'),
      x('"0x10"', 'quoted-hex'),
      x('"12abc"', 'trailing'),
      '{"ph":"X","dur":1,"name":"no-ts"}',
      x('40', 'bad-dur', '"zz"'),
    ];
    const profile = importTraceBytes('t.json', enc(`{"traceEvents":[${events.join(',')}]}`), {
      chunkSize: 7,
    });
    const names = Array.from({ length: profile.slices.length }, (_, i) => profile.nameOf(i)).sort();
    expect(names).toEqual(['bad-dur', 'exponent', 'good', 'quoted']);
    // 0x10 is not read as 0 (nor as 16).
    const start = Math.min(
      ...Array.from({ length: profile.slices.length }, (_, i) => profile.slices.start[i]),
    );
    expect(profile.absoluteNs(start)).toBe(10_000n);
    const badDur = names.indexOf('bad-dur');
    expect(profile.slices.kind[badDur]).not.toBe(SliceKind.Instant);
    expect(profile.warnings.map((w) => w.message)).toEqual([
      '6 event(s) dropped: their "ts" is not a decimal number (the first: NaN); ts is microseconds, as 1234.5 or "1234.5"',
      '1 event(s) dropped: they have no "ts", so they cannot be placed',
      '1 event(s) read with a duration of 0: their "dur" is not a decimal number (the first: "zz")',
    ]);
  });

  it('the CLI shows the warning and still summarises the rest', async () => {
    const file = path.join(dir, 'hex.json');
    writeFileSync(file, `{"traceEvents":[${x('5', 'ok')},${x('0x10', 'hex')},${x('"abc"', 'abc')}]}`);
    const result = await runCli(['summary', file]);
    expect(result.code).toBe(0);
    expect(lines(result.stderr)).toEqual([
      `flagprof: warning: ${file}: 2 event(s) dropped: their "ts" is not a decimal number (the first: 0x10); ts is microseconds, as 1234.5 or "1234.5"`,
    ]);
    expect(result.stdout).toContain('3 events');
  });
});
