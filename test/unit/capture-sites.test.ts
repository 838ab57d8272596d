/** sites.json validation, session folders (naming, keep-last-N), argument splitting and stderr line matching. */
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parseSites, readSites, SitesError } from '../../extension/import/sites';
import { joinArgs, splitArgs } from '../../extension/capture/args';
import { findInterpreter, InterpreterError, whichOnPath } from '../../extension/capture/interpreter';
import { agentArgs, isFlagosTraceLine } from '../../extension/capture/launcher';
import { openProfile } from '../../extension/capture/open';
import { SessionError } from '../../extension/capture/session';
import { createSessionDir, listSessions, pruneSessions } from '../../extension/capture/sessions';
import { ImportError } from '../../extension/import/errors';

const tmp = (): string => mkdtempSync(path.join(os.tmpdir(), 'flagprof-unit-'));

describe('sites.json', () => {
  it('reads External ids and frames, innermost first', () => {
    const sites = parseSites(
      {
        version: 1,
        sites: {
          '0': [{ file: '/w/train.py', line: 12, function: 'forward' }],
          '17': [
            { file: '/w/model.py', line: 30, function: 'attention' },
            { file: '/w/train.py', line: 50, function: 'main' },
          ],
        },
      },
      'sites.json',
    );
    expect([...sites.keys()]).toEqual([0, 17]);
    expect(sites.get(17)?.[1]).toEqual({ file: '/w/train.py', line: 50, function: 'main' });
  });

  it('version 2: each chain once, ops as (External id, chain index) pairs sharing it', () => {
    const sites = parseSites(
      {
        version: 2,
        chains: [
          [{ file: '/w/train.py', line: 12, function: 'forward' }],
          [
            { file: '/w/model.py', line: 30, function: 'attention' },
            { file: '/w/train.py', line: 50, function: 'main' },
          ],
        ],
        sites: [0, 0, 17, 1, 18, 1],
      },
      'sites.json',
    );
    expect([...sites.keys()]).toEqual([0, 17, 18]);
    expect(sites.get(17)?.[1]).toEqual({ file: '/w/train.py', line: 50, function: 'main' });
    expect(sites.get(18)).toBe(sites.get(17));
  });

  it("version 3: the expression's span and how the frame was found", () => {
    const attention = {
      file: '/w/model.py',
      line: 25,
      function: 'forward',
      column: 16,
      endLine: 25,
      endColumn: 39,
    };
    const call = { file: '/w/model.py', line: 40, function: 'call', column: 9, endLine: 42, endColumn: 2 };
    const sites = parseSites(
      {
        version: 3,
        chains: [
          [attention, { file: '/w/train.py', line: 50, function: 'main' }],
          [
            {
              file: '/w/train.py',
              line: 52,
              function: 'main',
              column: 5,
              endLine: 52,
              endColumn: 20,
              kind: 'backward',
            },
          ],
          [{ file: '/w/model.py', line: 12, function: 'mix', kind: 'function' }],
          [call],
        ],
        sites: [3, 0, 4, 1, 5, 2, 6, 3],
      },
      'sites.json',
    );
    expect(sites.get(3)).toEqual([attention, { file: '/w/train.py', line: 50, function: 'main' }]);
    expect(sites.get(4)?.[0].kind).toBe('backward');
    expect(sites.get(5)?.[0]).toEqual({ file: '/w/model.py', line: 12, function: 'mix', kind: 'function' });
    // A span over several lines ends on its own column, before or after the start's.
    expect(sites.get(6)?.[0]).toEqual(call);
  });

  it('a span or kind that does not validate is dropped with one warning; the frame and its line stay', async () => {
    const frames = [
      { file: '/w/a.py', line: 3, function: 'f', column: 'x', endLine: 3, endColumn: 9 },
      { file: '/w/a.py', line: 4, function: 'f', column: 0, endLine: 4, endColumn: 9 },
      { file: '/w/a.py', line: 5, function: 'f', column: 9, endLine: 5, endColumn: 2 },
      { file: '/w/a.py', line: 6, function: 'f', column: 2, endLine: 6, endColumn: 9, kind: 'inlined' },
      { file: '/w/a.py', line: 7, function: 'f', column: 2 },
    ];
    const file = path.join(tmp(), 'sites.json');
    writeFileSync(
      file,
      JSON.stringify({
        version: 3,
        chains: frames.map((frame) => [frame]),
        sites: [0, 0, 1, 1, 2, 2, 3, 3, 4, 4],
      }),
    );
    const warnings: { message: string }[] = [];
    const sites = await readSites(file, warnings);
    expect([...(sites?.values() ?? [])].map((chain) => chain[0])).toEqual([
      { file: '/w/a.py', line: 3, function: 'f' },
      { file: '/w/a.py', line: 4, function: 'f' },
      { file: '/w/a.py', line: 5, function: 'f' },
      { file: '/w/a.py', line: 6, function: 'f', column: 2, endLine: 6, endColumn: 9 },
      { file: '/w/a.py', line: 7, function: 'f' },
    ]);
    expect(warnings).toEqual([
      {
        message:
          'sites.json has fields that are not valid, ignored: "column" in 2 frames (first chains[0][0]: "x"); ' +
          '"endColumn" in 1 frame (first chains[2][0]: 2); "kind" in 1 frame (first chains[3][0]: "inlined"); ' +
          '"endLine" in 1 frame (first chains[4][0]: undefined)',
      },
    ]);
    // Read without a warnings list: the same frames, nothing thrown.
    expect((await readSites(file)).get(3)?.[0].column).toBe(2);
  });

  it.each([
    [[], 'expected a JSON object'],
    [{ version: 4, sites: {} }, 'unsupported version 4 (expected 1, 2 or 3)'],
    [{ version: 2, chains: {}, sites: [] }, '"chains" must be an array'],
    [
      { version: 2, chains: [[]], sites: [1] },
      '"sites" must be a flat array of External id, chain index pairs',
    ],
    [{ version: 2, chains: [[]], sites: [1, 4] }, 'sites[1]: 4 is not a chain index'],
    [{ version: 1, sites: [] }, '"sites" must be an object'],
    [{ version: 1, sites: { abc: [] } }, 'site key "abc" is not an External id'],
    [{ version: 1, sites: { '-1': [] } }, 'site key "-1" is not an External id'],
    [{ version: 1, sites: { '3': {} } }, 'sites["3"] must be an array'],
    [
      { version: 1, sites: { '3': [{ file: '', line: 1, function: 'f' }] } },
      'sites["3"][0]: "file" must be a non-empty string',
    ],
    [
      { version: 1, sites: { '3': [{ file: 'a.py', line: 1.5, function: 'f' }] } },
      'sites["3"][0]: "line" must be a non-negative integer',
    ],
    [
      { version: 1, sites: { '3': [{ file: 'a.py', line: 1 }] } },
      'sites["3"][0]: "function" must be a string',
    ],
  ])('rejects %j with one line naming the file', (document, message) => {
    expect(() => parseSites(document, '/s/sites.json')).toThrow(SitesError);
    expect(() => parseSites(document, '/s/sites.json')).toThrow(`/s/sites.json: ${message}`);
  });

  it('a file that is not JSON is an ImportError naming it', async () => {
    const dir = tmp();
    const file = path.join(dir, 'sites.json');
    writeFileSync(file, '{"version": 1, "sites": {');
    const error = await readSites(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImportError);
    expect((error as Error).message).toMatch(new RegExp(`^${file}: not valid JSON`));
    expect((error as Error).message).not.toContain('\n');
  });
});

describe('session folders', () => {
  it('a folder without a trace says why, from session.json', async () => {
    const dir = tmp();
    writeFileSync(
      path.join(dir, 'session.json'),
      JSON.stringify({ notes: ['the script ended before the profiling window opened'] }),
    );
    const error = await openProfile(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionError);
    expect((error as Error).message).toBe(
      `${dir}: no trace.json.gz (the script ended before the profiling window opened)`,
    );
  });

  it("a session's own trace file opens as its session: exact call sites kept; a trace elsewhere stays a trace", async () => {
    const trace = {
      traceEvents: [
        {
          ph: 'X',
          cat: 'cpu_op',
          name: 'aten::mm',
          pid: 1,
          tid: 1,
          ts: 10,
          dur: 5,
          args: { 'External id': 7 },
        },
      ],
    };
    const sites = { version: 1, sites: { '7': [{ file: '/w/train.py', line: 28, function: 'forward' }] } };
    const session = tmp();
    writeFileSync(path.join(session, 'trace.json.gz'), gzipSync(JSON.stringify(trace)));
    writeFileSync(path.join(session, 'sites.json'), JSON.stringify(sites));
    writeFileSync(path.join(session, 'session.json'), JSON.stringify({ mode: 'cpu' }));
    const opened = (await openProfile(path.join(session, 'trace.json.gz'))).profile;
    expect(opened.sites?.get(7)?.[0]).toEqual({ file: '/w/train.py', line: 28, function: 'forward' });
    expect(opened.metadata.session).toEqual({ mode: 'cpu' });

    // The same files without session.json are just a trace and a stray sites.json.
    const loose = tmp();
    writeFileSync(path.join(loose, 'trace.json.gz'), gzipSync(JSON.stringify(trace)));
    writeFileSync(path.join(loose, 'sites.json'), JSON.stringify(sites));
    expect((await openProfile(path.join(loose, 'trace.json.gz'))).profile.sites).toBeUndefined();
  });

  it('are named by time and script, and only the newest N survive; other folders are left alone', () => {
    const root = tmp();
    mkdirSync(path.join(root, 'not-a-session'));
    const made: string[] = [];
    for (let i = 0; i < 5; i++)
      made.push(createSessionDir(root, '/w/my train.py', new Date(2026, 0, 2, 3, 4, 5, i)));
    expect(path.basename(made[0])).toBe('20260102-030405-000-my_train');
    const same = createSessionDir(root, '/w/my train.py', new Date(2026, 0, 2, 3, 4, 5, 4));
    expect(path.basename(same)).toBe('20260102-030405-004-my_train-2');
    expect(listSessions(root)[0]).toBe(same);
    const removed = pruneSessions(root, 3, made[0]);
    expect(removed.sort()).toEqual([made[1], made[2], made[3]].sort());
    expect(readdirSync(root).sort()).toEqual([
      '20260102-030405-000-my_train',
      '20260102-030405-004-my_train',
      '20260102-030405-004-my_train-2',
      'not-a-session',
    ]);
  });
});

describe('launcher pieces', () => {
  it('splits typed arguments like a shell and joins them back', () => {
    expect(splitArgs(`--lr 1e-3 --name "two words" 'it''s' a\\ b ""`)).toEqual([
      '--lr',
      '1e-3',
      '--name',
      'two words',
      'its',
      'a b',
      '',
    ]);
    expect(() => splitArgs('--name "open')).toThrow('unterminated " quote');
    const args = ['--name', 'two words', "it's", ''];
    expect(splitArgs(joinArgs(args))).toEqual(args);
  });

  it("keeps the torch_fl tracer lines of stderr, not the script's own", () => {
    expect(isFlagosTraceLine('[flagos] session stop: drained 12 device events')).toBe(true);
    expect(isFlagosTraceLine('[flagos-cupti-shim] cuptiActivityRegisterCallbacks NOT resolved')).toBe(true);
    expect(isFlagosTraceLine('  [flagos] indented is not the tracer')).toBe(false);
    expect(isFlagosTraceLine('warning: [flagos] quoted')).toBe(false);
    expect(isFlagosTraceLine('USDT:2026-11-30 SyncActivityProfilerHandler.cpp:52] profiler_start')).toBe(
      false,
    );
  });

  it('passes the session, mode, window and the script after --', () => {
    expect(
      agentArgs({
        python: 'py',
        script: '/w/t.py',
        args: ['--x', '1'],
        sessionDir: '/s',
        mode: 'cpu',
        delayS: 2,
        durationS: 5,
      }),
    ).toEqual([
      '-m',
      'flagprof_agent',
      '--session',
      '/s',
      '--progress-fd',
      '3',
      '--mode',
      'cpu',
      '--delay',
      '2',
      '--duration',
      '5',
      '--',
      '/w/t.py',
      '--x',
      '1',
    ]);
  });

  it('finds the interpreter: configured, then the Python extension, then PATH; a clear error with the fix', async () => {
    const dir = tmp();
    const fake = path.join(dir, 'python3');
    writeFileSync(fake, '#!/bin/sh\n', { mode: 0o755 });
    expect(whichOnPath('python3', dir)).toBe(fake);
    expect(await findInterpreter({ configured: fake })).toEqual({ path: fake, source: 'setting' });
    expect(await findInterpreter({ fromPythonExtension: async () => fake, envPath: '' })).toEqual({
      path: fake,
      source: 'python-extension',
    });
    expect(await findInterpreter({ fromPythonExtension: async () => undefined, envPath: dir })).toEqual({
      path: fake,
      source: 'path',
    });
    const missing = await findInterpreter({ envPath: tmp() }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(InterpreterError);
    expect((missing as InterpreterError).fix).toContain('flagos.pythonPath');
    await expect(findInterpreter({ configured: path.join(dir, 'nope') })).rejects.toThrow(
      'was not found or is not executable',
    );
  });
});
