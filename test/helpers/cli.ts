/**
 * Runs the real flagprof CLI (bin/flagprof.js over a fresh dist/cli.js) in a child process and reports its exit
 * code, output, wall time and peak resident memory (read in the child through a preloaded hook).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

import { requirePython } from './agent';
import { ROOT } from './paths';

export { ROOT };
export const BIN = path.join(ROOT, 'bin', 'flagprof.js');

let built = false;
/** The tests exercise the bundle, so it is rebuilt from the sources once per test file. */
export function buildCli(): void {
  if (built) return;
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
  built = true;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** Peak resident memory of the CLI process, in MB. */
  peakRssMB: number;
}

export interface CliRun {
  env?: Record<string, string>;
  /** Written to the CLI's stdin, which is closed after it. */
  input?: Buffer | string;
  /** Called once the child is started (to feed a FIFO, say). */
  started?: () => void;
  cwd?: string;
  timeoutMs?: number;
}

export function makeTempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), `flagprof-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

const hooks = makeTempDir('rss-hook');
const HOOK = path.join(hooks.dir, 'rss.cjs');
writeFileSync(
  HOOK,
  "process.on('exit', () => require('node:fs').writeFileSync(process.env.FLAGPROF_TEST_RSS_FILE, String(process.resourceUsage().maxRSS)));\n",
);
let runs = 0;

/** Removes the hook's folder (call from afterAll). */
export function cleanupCliRuns(): void {
  hooks.remove();
}

/**
 * A suite that profiles real Python scripts through the CLI: the project's Python required and the CLI built
 * before it; the CLI's run files and the suite's `scratch` folder removed after it.
 */
export function profilingSuite(scratch: string): void {
  beforeAll(() => {
    requirePython();
    buildCli();
  });
  afterAll(() => {
    cleanupCliRuns();
    rmSync(scratch, { recursive: true, force: true });
  });
}

export function runCli(args: string[], options: CliRun = {}): Promise<CliResult> {
  const rssFile = path.join(hooks.dir, `rss-${process.pid}-${runs++}`);
  const started = performance.now();
  const child = spawn(process.execPath, ['--require', HOOK, BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env, FLAGPROF_TEST_RSS_FILE: rssFile },
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own process group, so a timeout ends the processes it started too (they hold its pipes open).
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  // A CLI that stops reading stdin early (it refused the input) closes the pipe: not an error of the test.
  child.stdin.on('error', () => undefined);
  if (options.input !== undefined) child.stdin.end(options.input);
  else child.stdin.end();
  options.started?.();
  const timer = setTimeout(() => {
    stderr += `\n[test] timed out after ${options.timeoutMs ?? 60_000} ms: killed\n`;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
    // A grandchild in a session of its own may still hold the pipes: report without waiting for them.
    setTimeout(() => child.emit('close', null), 5000).unref();
  }, options.timeoutMs ?? 60_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      let peakRssMB = Number.NaN;
      try {
        peakRssMB = Number(readFileSync(rssFile, 'utf8')) / 1024;
      } catch {
        // killed before its exit hook ran
      }
      resolve({ code, stdout, stderr, ms: performance.now() - started, peakRssMB });
    });
  });
}

/** stderr as lines, without the empty one after the last newline. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line, i, all) => line !== '' || i < all.length - 1);
}
