/**
 * A run as `diffAnalyses` compares it: its analysis, its script folder and a reader of the source texts it profiled.
 * The command line (`flagprof diff`) and the editor ("FlagOS: Compare with…") build their runs here.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { activitySpan, type DiffRun } from '../analysis/diff';
import type { Analysis } from '../analysis/types';
import type { Profile } from '../model/profile';
import type { SessionRecord } from './session';

/** When the run ended, in epoch ns: the session's window, else the trace's own clock; undefined when unknown. */
function runEndNs(profile: Profile, session: SessionRecord | undefined): bigint | undefined {
  const end = session?.window?.endNs;
  if (end !== undefined) return end;
  const span = activitySpan(profile);
  return profile.originNs > 0n && span ? profile.absoluteNs(span.endNs) : undefined;
}

/**
 * The files as they are now stand for what the run profiled only while they are older than the run's end: a
 * file written since may hold other lines at the same numbers, so it reads as unknown.
 */
export function sourceReader(endNs: bigint | undefined): (file: string) => string | undefined {
  const texts = new Map<string, string | undefined>();
  return (file) => {
    if (!texts.has(file)) {
      let text: string | undefined;
      try {
        const stat = statSync(file, { bigint: true });
        if (stat.isFile() && (endNs === undefined || stat.mtimeNs <= endNs))
          text = readFileSync(file, 'utf8');
      } catch {
        text = undefined;
      }
      texts.set(file, text);
    }
    return texts.get(file);
  };
}

export function diffRunOf(
  profile: Profile,
  analysis: Analysis,
  session: SessionRecord | undefined,
  label?: string,
): DiffRun {
  const script = session?.script;
  return {
    analysis,
    label,
    root: script ? path.dirname(script) : undefined,
    source: sourceReader(runEndNs(profile, session)),
  };
}
