/** Session folders: one per run, named by start time and script, the oldest removed beyond the last N. */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const SESSION_NAME = /^\d{8}-\d{6}-\d{3}-/;

function stamp(date: Date): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return (
    `${date.getFullYear()}${p(date.getMonth() + 1)}${p(date.getDate())}-` +
    `${p(date.getHours())}${p(date.getMinutes())}${p(date.getSeconds())}-${p(date.getMilliseconds(), 3)}`
  );
}

/** Creates ROOT/<yyyymmdd-hhmmss-mmm>-<script name>/ (a suffix keeps two runs in one millisecond apart). */
export function createSessionDir(root: string, script: string, now = new Date()): string {
  mkdirSync(root, { recursive: true });
  const stem =
    path
      .basename(script)
      .replace(/\.py$/, '')
      .replace(/[^A-Za-z0-9_.-]+/g, '_') || 'script';
  const base = `${stamp(now)}-${stem}`;
  for (let n = 1; ; n++) {
    const dir = path.join(root, n === 1 ? base : `${base}-${n}`);
    if (!existsSync(dir)) {
      mkdirSync(dir);
      return dir;
    }
  }
}

/** The session folders under root, newest first (only folders this product named; nothing else is touched). */
export function listSessions(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  return names
    .filter((name) => SESSION_NAME.test(name))
    .filter((name) => {
      try {
        return statSync(path.join(root, name)).isDirectory();
      } catch {
        return false;
      }
    })
    .sort()
    .reverse()
    .map((name) => path.join(root, name));
}

/** Removes all but the newest `keep` session folders; returns the removed ones. `protect` is never removed. */
export function pruneSessions(root: string, keep: number, protect?: string): string[] {
  const removed: string[] = [];
  const limit = Math.max(1, Math.floor(keep));
  const sessions = listSessions(root).filter(
    (dir) => !protect || path.resolve(dir) !== path.resolve(protect),
  );
  const allowed = protect ? limit - 1 : limit;
  for (const dir of sessions.slice(Math.max(0, allowed))) {
    rmSync(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}
