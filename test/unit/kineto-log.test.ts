import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isKinetoLogLine, KinetoLogFilter } from '../../extension/capture/kinetoLog';

const START = 'USDT:2026-12-02 02:41:47 15248:15248 SyncActivityProfilerHandler.cpp:52] profiler_start';
const STOP = 'USDT:2026-12-02 02:41:48 15248:15248 SyncActivityProfilerHandler.cpp:59] profiler_stop';
const STAGE =
  'STAGE:2023-05-01 10:00:00 123:123 ActivityProfilerController.cpp:312] Completed Stage: Warm Up';

/** Feeds the bytes in the given pieces; returns what the user saw and what went to the log. */
function run(bytes: Buffer, cuts: number[]): { user: Buffer; log: string[] } {
  const user: Buffer[] = [];
  const log: string[] = [];
  const filter = new KinetoLogFilter(
    (chunk) => user.push(Buffer.from(chunk)),
    (line) => log.push(line),
  );
  let from = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length)].sort((a, b) => a - b)) {
    filter.push(bytes.subarray(from, cut));
    from = cut;
  }
  filter.push(bytes.subarray(from));
  filter.end();
  return { user: Buffer.concat(user), log };
}

describe("Kineto's log lines leave the user's stderr for kineto.log", () => {
  it('recognises the lines torch 2.x and older torch print', () => {
    expect([START, STOP, STAGE].every(isKinetoLogLine)).toBe(true);
    expect(isKinetoLogLine('USDT: my own message')).toBe(false);
    expect(isKinetoLogLine('step 0 loss 2.2253 (cpu)')).toBe(false);
  });

  it('takes out exactly the Kineto lines, whatever the read boundaries, and passes every other byte through', () => {
    const userLine = fc.oneof(
      fc.constantFrom(
        'step   0  loss 2.2253  (cpu)',
        'USDT: not kineto',
        'US',
        'Traceback (most recent call last):',
      ),
      fc.string({ maxLength: 40 }).map((s) => s.replace(/\n/g, ' ')),
    );
    const piece = fc.oneof(
      fc.constantFrom(`${START}\n`, `${STOP}\n`, `${STAGE}\r\n`),
      userLine.map((line) => `${line}\n`),
      // A progress bar: carriage returns, no newline.
      fc.constantFrom('\r 10%|#   |', '\r 50%|#####|', 'é→'),
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 12 }),
        fc.array(fc.nat(400), { maxLength: 8 }),
        (pieces, cuts) => {
          const text = pieces.join('');
          const { user, log } = run(Buffer.from(text, 'utf8'), cuts);
          // What the user sees is the text without the Kineto lines (a line is one only from a line start).
          let expected = '';
          const expectedLog: string[] = [];
          let atLineStart = true;
          for (const p of pieces) {
            const line = p.replace(/\r?\n$/, '');
            if (atLineStart && p.endsWith('\n') && isKinetoLogLine(line)) expectedLog.push(line);
            else expected += p;
            if (p.length) atLineStart = p.endsWith('\n');
          }
          expect(user.toString('utf8')).toBe(expected);
          expect(log).toEqual(expectedLog);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("a partial line at the end of the stream is the user's", () => {
    const { user, log } = run(Buffer.from('USDT:2026-12-02'), []);
    expect(user.toString()).toBe('USDT:2026-12-02');
    expect(log).toEqual([]);
  });
});
