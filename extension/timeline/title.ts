/**
 * A timeline tab's title: `train.py · 18:02` for a profile run from the editor (the session's script and the
 * local time it started), else the trace's file name. The title also finds a tab's profile again after a window
 * reload (restore.ts), so it depends on nothing but the session's own record.
 */
import * as path from 'node:path';

/** What the session folder's session.json says about the run, where the profile came from one. */
export interface SessionTitleFields {
  /** The script that ran. */
  script?: unknown;
  /** When the run started, ISO 8601 (the agent writes UTC). */
  startedAt?: unknown;
}

/** `script · HH:MM` (local time) for a session, else the file or folder name of `source`. */
export function timelineTitle(source: string, session?: SessionTitleFields): string {
  const script = typeof session?.script === 'string' ? session.script : '';
  const started = typeof session?.startedAt === 'string' ? new Date(session.startedAt) : undefined;
  if (!script || !started || Number.isNaN(started.getTime())) return path.basename(source);
  const hhmm = `${String(started.getHours()).padStart(2, '0')}:${String(started.getMinutes()).padStart(2, '0')}`;
  return `${scriptName(script)} · ${hhmm}`;
}

/** The script's file name, whichever separator its path uses. */
function scriptName(script: string): string {
  return script.split(/[\\/]/).filter(Boolean).pop() ?? script;
}
