/**
 * The CLI on every kind of input: pipes, FIFOs, stdin and process substitution read as streams; folders, huge
 * names and unwritable outputs are one short line and exit 2; every command answers --help; a damaged sites.json
 * costs the exact lines, not the session.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { readSites, SitesError } from '../../extension/import/sites';
import { buildSummary } from '../../extension/analysis/summary';
import { COMMANDS } from '../../extension/cli/commands';
import { importTrace } from '../../extension/import/kineto';
import { BIN, ROOT, buildCli, cleanupCliRuns, lines, makeTempDir, runCli } from '../helpers/cli';

const temp = makeTempDir('robust');
const dir = temp.dir;
beforeAll(() => buildCli());
afterAll(() => {
  temp.remove();
  cleanupCliRuns();
});

const REAL = path.resolve(ROOT, '../shared/traces/hta_a100_simple_add.trace.json.gz');
const REAL_EVENTS = '(kineto-object, 1,348 events)';

describe('streams', () => {
  it('- reads stdin, gzip told by its magic bytes, and plain JSON too', async () => {
    const gz = await runCli(['summary', '-'], { input: readFileSync(REAL) });
    expect(gz.stderr).toBe('');
    expect(gz.code).toBe(0);
    expect(gz.stdout).toContain(REAL_EVENTS);
    const plain = await runCli(['summary', '--json', '-'], {
      input: '{"traceEvents":[{"ph":"X","ts":1,"dur":2,"name":"aten::mm","cat":"cpu_op"}]}',
    });
    expect(plain.code).toBe(0);
    expect(JSON.parse(plain.stdout).source.events).toBe(1);
  });

  it('/dev/stdin is read as the pipe it is (no seek)', async () => {
    const result = await runCli(['summary', '/dev/stdin'], { input: readFileSync(REAL) });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(REAL_EVENTS);
  });

  it('empty stdin is one line', async () => {
    const result = await runCli(['summary', '-'], { input: '' });
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      'flagprof: /dev/stdin: empty file: expected a Kineto trace (JSON object or array) (at byte 0)',
    ]);
  });

  it('a FIFO is opened once and read as a stream', async () => {
    const fifo = path.join(dir, 'trace.fifo');
    execFileSync('mkfifo', [fifo]);
    const result = await runCli(['summary', fifo], {
      // Opening a FIFO for writing waits for its reader: the CLI, started just before.
      started: () => createWriteStream(fifo).end(readFileSync(REAL)),
      timeoutMs: 30_000,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(REAL_EVENTS);
  });

  it('process substitution <(...) reads the pipe', () => {
    const result = spawnSync(
      'bash',
      [
        '-c',
        `"${process.execPath}" "${BIN}" summary <(cat "${REAL}") && "${process.execPath}" "${BIN}" summary <(zcat "${REAL}")`,
      ],
      { encoding: 'utf8' },
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout.split(REAL_EVENTS)).toHaveLength(3);
  });
});

describe('bad input is one short line and exit 2', () => {
  it('a folder where a trace file is expected', async () => {
    const folder = path.join(dir, 'session', 'trace.json.gz');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(dir, 'session', 'session.json'), '{}');
    for (const args of [
      ['summary', path.join(dir, 'session')],
      ['baseline', folder, '--out', path.join(dir, 'b.json')],
    ]) {
      const result = await runCli(args);
      expect(result.code).toBe(2);
      expect(lines(result.stderr)).toEqual([`flagprof: ${folder}: is a folder, not a trace file`]);
    }
    // summary takes any folder for a session folder: still one line, exit 2.
    const alone = await runCli(['summary', folder]);
    expect(alone.code).toBe(2);
    expect(lines(alone.stderr)).toHaveLength(1);
    expect(alone.stderr).toContain(folder);
  });

  it('an --out that cannot be written', async () => {
    const outs = [dir, path.join(dir, 'no-such-folder', 'r.html')];
    if (process.getuid?.() !== 0) {
      const readOnly = path.join(dir, 'read-only');
      mkdirSync(readOnly, { mode: 0o555 });
      outs.push(path.join(readOnly, 'r.html'));
    }
    for (const out of outs) {
      const result = await runCli(['report', REAL, '--out', out]);
      expect(result.code).toBe(2);
      expect(lines(result.stderr)).toHaveLength(1);
      expect(result.stderr).toMatch(/^flagprof: .*: cannot write the report \((EISDIR|ENOENT|EACCES)\)\n$/);
    }
  });

  it('a huge key is quoted cut short, so stderr stays one short line', async () => {
    const file = path.join(dir, 'key.json');
    writeFileSync(file, `{"${'k'.repeat(5 * 2 ** 20)}" 1}`);
    const result = await runCli(['summary', file]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr.length).toBeLessThan(400);
    expect(result.stderr).toMatch(
      /invalid JSON: expected ':' after "k{100}… \(5,242,880 characters\)" \(at byte \d+\)/,
    );
  });

  it('an event name of 100 MB: refused, exit 2, not an internal error', async () => {
    const file = path.join(dir, 'name.json');
    writeFileSync(file, `{"traceEvents":[{"ph":"X","ts":1,"dur":1,"name":"${'n'.repeat(100 * 2 ** 20)}"}]}`);
    const result = await runCli(['summary', file]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      `flagprof: ${file}: one event longer than 64.0 MB, from byte 16 (the limit; FLAGPROF_MAX_VALUE_BYTES changes it)`,
    ]);
  });

  it('control characters in names are escaped, long bare values cut', async () => {
    const file = path.join(dir, 'odd\nname\x1b[31m.json');
    writeFileSync(file, '{"traceEvents": [');
    const result = await runCli(['summary', file]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      `flagprof: ${dir}/odd\\nname\\u{1b}[31m.json: truncated JSON: expected an event object, ',' or ']' (at byte 17)`,
    ]);
    const bare = path.join(dir, 'bare.json');
    writeFileSync(
      bare,
      `{"traceEvents":[{"ph":"X","ts":1,"dur":1,"name":"op\\u0007","args":{"k":${'v'.repeat(300_000)}}}]}`,
    );
    const warned = await runCli(['summary', bare]);
    expect(warned.code).toBe(0);
    const warning = lines(warned.stderr).find((line) => line.includes('bare non-JSON value'));
    expect(warning).toBeDefined();
    expect(warning!.length).toBeLessThan(400);
    expect(warning).toContain('in event "op\\u{7}"');
  });
});

describe('--help', () => {
  it.each(Object.keys(COMMANDS))('%s --help and -h: its usage on stdout, exit 0', async (name) => {
    for (const flag of ['--help', '-h']) {
      const result = await runCli([name, flag]);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(new RegExp(`^usage: flagprof ${name} `));
      expect(result.stdout).toMatch(/\n {2}-h, --help +this help\n/);
    }
  });

  it('flagprof --help, -h, help and help COMMAND', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const result = await runCli(args);
      expect(result.code).toBe(0);
      for (const name of Object.keys(COMMANDS)) expect(result.stdout).toContain(`  flagprof ${name} `);
      expect(result.stdout).toContain('FLAGPROF_MAX_TRACE_BYTES');
    }
    const topic = await runCli(['help', 'decode']);
    expect(topic.code).toBe(0);
    expect(topic.stdout).toMatch(/^usage: flagprof decode CAPTURE\.fpc/);
    const unknown = await runCli(['help', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^flagprof: unknown command "nope"\n/);
  });

  it("after profile's script, --help is the script's", async () => {
    const result = await runCli(['profile', 'missing-script.py', '--help']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toEqual(['flagprof: missing-script.py: no such file']);
  });
});

describe('a damaged sites.json', () => {
  const session = path.join(dir, 'sites-session');
  const trace = {
    traceEvents: [
      { ph: 'X', cat: 'python_function', name: '/w/train.py(20): forward', pid: 1, tid: 1, ts: 5, dur: 20 },
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
  const sites = JSON.stringify({
    version: 2,
    chains: [[{ file: '/w/train.py', line: 28, function: 'forward' }]],
    sites: [7, 0],
  });
  const sitesPath = path.join(session, 'sites.json');
  beforeAll(() => {
    mkdirSync(session, { recursive: true });
    writeFileSync(path.join(session, 'trace.json.gz'), gzipSync(JSON.stringify(trace)));
    writeFileSync(
      path.join(session, 'session.json'),
      JSON.stringify({ version: 1, mode: { chosen: 'cpu' } }),
    );
  });

  /** What the session loader does: the trace, then the sites with the profile's warnings as the sink. */
  async function open() {
    const profile = await importTrace(path.join(session, 'trace.json.gz'));
    profile.sites = await readSites(sitesPath, profile.warnings);
    return buildSummary(analyze(profile));
  }

  it('intact: exact lines', async () => {
    writeFileSync(sitesPath, sites);
    const summary = await open();
    expect(summary.lines[0]).toMatchObject({ file: '/w/train.py', line: 28, exact: true });
    expect(summary.source.warnings).toEqual([]);
  });

  it('damaged: a warning naming the byte, and lines at function level', async () => {
    writeFileSync(sitesPath, sites.replace('"sites":', '"sites" '));
    const summary = await open();
    const at = sites.indexOf('"sites":') + '"sites"'.length + 1;
    expect(summary.source.warnings).toEqual([
      `sites.json is damaged at byte ${at}: expected ':' after a key; lines are shown at function level`,
    ]);
    expect(summary.lines[0]).toMatchObject({
      file: '/w/train.py',
      line: 20,
      function: 'forward',
      exact: false,
    });
  });

  it('truncated: the same, at its end', async () => {
    const cut = sites.slice(0, 40);
    writeFileSync(sitesPath, cut);
    const summary = await open();
    expect(summary.source.warnings).toEqual([
      `sites.json is damaged at byte ${cut.length}: the file ends early (truncated); lines are shown at function level`,
    ]);
    expect(summary.lines[0]).toMatchObject({ line: 20, exact: false });
  });

  it('valid JSON of the wrong shape: a warning too', async () => {
    writeFileSync(sitesPath, JSON.stringify({ version: 2, chains: [[]], sites: [7, 4] }));
    const summary = await open();
    expect(summary.source.warnings).toEqual([
      'sites.json is damaged: sites[1]: 4 is not a chain index; lines are shown at function level',
    ]);
    expect(summary.lines[0]).toMatchObject({ line: 20, exact: false });
  });

  it('without a warnings sink it is still an error of one line', async () => {
    writeFileSync(sitesPath, sites.slice(0, 40));
    const error = await readSites(sitesPath).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SitesError);
    expect((error as Error).message).toBe(
      `${sitesPath}: not valid JSON (damaged at byte 40: the file ends early (truncated))`,
    );
  });
});
