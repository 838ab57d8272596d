/**
 * The memory guard (timeline/budget.ts): what a target opens, in decompressed bytes, and the refusal before any of
 * it is read, with the host's and (in a desktop window) the page's measured share per byte; and how a session's
 * parts are named (capture/ranks.ts runPartsText), read from the same folder layout.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import {
  estimateOpenBytes,
  estimateTraceBytes,
  HOST_BYTES_PER_TRACE_BYTE,
  memoryBudgetProblem,
  RENDERER_BYTES_PER_TRACE_BYTE,
} from '../../extension/timeline/budget';
import { runPartsText } from '../../extension/capture/ranks';
import { TRACES } from '../helpers/paths';

const RANKS = path.join(TRACES, 'param_dlrm_v100x8');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'flagprof-budget-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const decompressed = (file: string): number => gunzipSync(readFileSync(file)).length;

describe('estimateOpenBytes', () => {
  it("a gzip trace counts its decompressed size (the gzip trailer's)", () => {
    const file = path.join(RANKS, readdirSync(RANKS)[0]);
    expect(estimateTraceBytes(file)).toBe(decompressed(file));
  });

  it('a folder of rank traces counts every trace in it', () => {
    const sum = readdirSync(RANKS).reduce((s, n) => s + decompressed(path.join(RANKS, n)), 0);
    expect(estimateOpenBytes(RANKS)).toBe(sum);
  });

  it("a session counts its trace, its ranks' and its child processes', not its side files", () => {
    const [a, b, c] = readdirSync(RANKS).map((n) => path.join(RANKS, n));
    const session = path.join(scratch, 'session');
    for (const [file, where] of [
      [a, ''],
      [b, 'ranks/1'],
      [c, 'ranks/1/procs/4242'],
    ] as const) {
      mkdirSync(path.join(session, where), { recursive: true });
      cpSync(file, path.join(session, where, 'trace.json.gz'));
      writeFileSync(
        path.join(session, where, 'session.json'),
        JSON.stringify({ version: 1, padding: 'x'.repeat(5000) }),
      );
      writeFileSync(path.join(session, where, 'sites.json'), '{}');
    }
    expect(estimateOpenBytes(session)).toBe(decompressed(a) + decompressed(b) + decompressed(c));
  });

  it('a missing target counts nothing (opening it says what is wrong)', () => {
    expect(estimateOpenBytes(path.join(scratch, 'missing.json'))).toBe(0);
  });
});

describe('memoryBudgetProblem', () => {
  const bytes = estimateOpenBytes(RANKS);

  it("refuses at the host's share per byte, naming the target, on one line", () => {
    const host = bytes * HOST_BYTES_PER_TRACE_BYTE;
    expect(memoryBudgetProblem(RANKS, { availableBytes: host + 1 })).toBeUndefined();
    const problem = memoryBudgetProblem(RANKS, { availableBytes: host - 1 });
    expect(problem).toMatch(
      /^.*param_dlrm_v100x8: too large for the memory available — opening it needs about /,
    );
    expect(problem).not.toContain('\n');
  });

  it("adds the page's share when the page runs on this machine too", () => {
    const host = bytes * HOST_BYTES_PER_TRACE_BYTE;
    expect(memoryBudgetProblem(RANKS, { availableBytes: host + 1, rendererHere: true })).toBeDefined();
    const both = bytes * (HOST_BYTES_PER_TRACE_BYTE + RENDERER_BYTES_PER_TRACE_BYTE);
    expect(memoryBudgetProblem(RANKS, { availableBytes: both + 1, rendererHere: true })).toBeUndefined();
  });
});

describe('runPartsText (the Sessions view)', () => {
  it("names a session's ranks and child processes, and nothing for a run of one process", () => {
    const session = path.join(scratch, 'parts');
    const part = (where: string): void => {
      mkdirSync(path.join(session, where), { recursive: true });
      writeFileSync(path.join(session, where, 'session.json'), '{"version": 1}');
    };
    part('');
    expect(runPartsText(session)).toBe('');
    part('procs/17');
    expect(runPartsText(session)).toBe('1 child process');
    rmSync(path.join(session, 'procs'), { recursive: true });
    for (const where of ['ranks/0', 'ranks/1', 'ranks/0/procs/41', 'ranks/1/procs/42', 'ranks/1/procs/43'])
      part(where);
    expect(runPartsText(session)).toBe('2 ranks · 3 child processes');
  });
});
