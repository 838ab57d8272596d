/**
 * A whole run as one profile: a multi-process session (torchrun: one part per rank) or a folder of rank traces
 * opens as every part merged on one timeline (import/merge.ts), each rank a track group; anything else opens as
 * openProfile opens it. The timeline, the HTML report and the editor's annotations (summed over the ranks) read it.
 */
import { analyze } from '../analysis/analyze';
import { rankCollectives } from '../analysis/collectives';
import { ranksOverview } from '../analysis/ranksCollectives';
import { ImportError } from '../import/errors';
import { mergeProfiles, type ProfilePart } from '../import/merge';
import { locateProfile, openProfile, type OpenedProfile, type OpenOptions } from './open';
import {
  childFolders,
  openChildren,
  openRankTraces,
  openRanks,
  rankFolders,
  rankTraceFiles,
  type OpenedRank,
} from './ranks';

/**
 * What opening a run may also do: show its first part (rank 0, or the main process) as soon as it is open, while
 * the others are read. `remaining` counts the parts still to come.
 */
export interface RunOptions extends OpenOptions {
  onFirstPart?: (first: OpenedProfile, remaining: number) => void | Promise<void>;
}

/** Opens TARGET; a run of several processes comes back merged, with metadata.parts naming them. */
export async function openRun(target: string, options: RunOptions = {}): Promise<OpenedProfile> {
  const source = locateProfile(target);
  const { onFirstPart, ...open } = options;
  if (source.kind !== 'session') return openProfile(source, open);
  const first = async (part: OpenedRank, index: number, total: number): Promise<void> => {
    if (index === 0 && total > 1 && part.opened && onFirstPart)
      await onFirstPart(mergedRun(source.folder, [part], source), total - 1);
  };
  if (!source.tracePath && rankFolders(source.folder).length > 0) {
    // Each rank, followed by its own child processes.
    const parts: OpenedRank[] = [];
    for (const rank of await openRanks(source.folder, { ...open, onOpened: first }))
      parts.push(rank, ...(await openChildren(rank.folder, `Rank ${rank.rank}`, open)));
    return mergedRun(source.folder, parts, source);
  }
  const children = source.tracePath ? childFolders(source.folder) : [];
  if (children.length > 0) {
    // One process and the children it started (DataLoader workers, multiprocessing): the main process first.
    const main: OpenedRank = {
      rank: '0',
      folder: source.folder,
      opened: await openProfile(source, open),
      child: { label: 'Main process', pid: '' },
    };
    await first(main, 0, children.length + 1);
    return mergedRun(source.folder, [main, ...(await openChildren(source.folder, undefined, open))], source);
  }
  // A folder that is no session of ours, with several traces: the ranks of one run (param's, HTA's and the
  // TensorBoard plugin's sets); one trace alone opens as that trace.
  if (!source.session && rankTraceFiles(source.folder).length > 1)
    return mergedRun(
      source.folder,
      await openRankTraces(source.folder, { ...open, onOpened: first }),
      source,
    );
  return openProfile(source, open);
}

/**
 * The opened parts of a run as one profile. Parts that could not be opened are named in its warnings; a run with
 * none that opened is an ImportError naming the folder and the first part's problem.
 */
export function mergedRun(
  folder: string,
  ranks: readonly OpenedRank[],
  source: OpenedProfile['source'],
): OpenedProfile {
  const parts: ProfilePart[] = [];
  const problems: string[] = [];
  for (const rank of ranks) {
    const label = rank.child?.label ?? `Rank ${rank.rank}`;
    if (rank.opened) parts.push({ label, profile: rank.opened.profile });
    else problems.push(`${rank.child ? label : `rank ${rank.rank}`}: ${rank.problem ?? 'not opened'}`);
  }
  if (parts.length === 0)
    throw new ImportError(folder, undefined, `none of its ${ranks.length} parts opens (${problems[0]})`);
  // Named after the run's folder: its tab reads as the session's ("train.py · 18:02") or the folder's name.
  const profile = mergeProfiles(parts, folder);
  for (const problem of problems) profile.warnings.push({ message: problem });
  // The communication overview (the Results view's Ranks section) is read from each rank alone, while the parts
  // are at hand: a collective is matched across ranks by its order on each.
  // Ranks only: a child process (a DataLoader worker) takes part in no collective.
  const rankParts = ranks.filter((rank) => !rank.child);
  if (rankParts.filter((rank) => rank.opened).length > 1)
    profile.metadata.ranks = ranksOverview(
      rankParts.flatMap((rank) =>
        rank.opened
          ? [
              {
                rank: rank.rank,
                originNs: rank.opened.profile.originNs,
                collectives: rankCollectives(analyze(rank.opened.profile)),
              },
            ]
          : [],
      ),
    );
  // The launcher's own session.json speaks for the run (the command, how it ended); a part's, only without one.
  const session =
    (source.kind === 'session' ? source.session?.document : undefined) ??
    ranks.find((r) => r.opened)?.opened?.profile.metadata.session;
  if (session) profile.metadata.session = session;
  return { source, profile };
}
