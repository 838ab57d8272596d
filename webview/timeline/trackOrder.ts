/**
 * The order of the timeline's rows, as Nsight Systems and Perfetto users expect: pinned tracks first, then the
 * processes with device streams, then the rest; inside a process device streams, then its counters (a device's
 * memory beside its streams), then CPU threads, then other rows. Tracks with nothing to draw are left out, and so
 * are processes left without tracks or counters. Plain data, no DOM.
 */
import type { TimelineCounterTrack, TimelineTrack } from '../../extension/protocol';

export interface TrackGroup {
  /** The process's key (its pid), or PINNED for the pinned tracks. */
  process: string;
  label: string;
  tracks: TimelineTrack[];
  /** Its counter rows, in the payload's order: drawn after its device streams, before its CPU threads. */
  counters: TimelineCounterTrack[];
}

/** The key of the group of pinned tracks (no pid is empty and bracketed). */
export const PINNED = '[pinned]';

const KIND_RANK = { device: 0, cpu: 1, other: 2 } as const;

/**
 * Groups `tracks` (the payload's order: by process sort index, then pid) into the rows' order. `shown` says
 * whether a track has anything to draw; a pinned track leaves its process for the pinned group.
 */
export function orderTracks(
  tracks: readonly TimelineTrack[],
  pinned: ReadonlySet<number>,
  shown: (track: TimelineTrack) => boolean,
  counters: readonly TimelineCounterTrack[] = [],
): TrackGroup[] {
  const visible = tracks.filter(shown);
  const byProcess = new Map<string, TimelineTrack[]>();
  for (const track of visible) {
    if (pinned.has(track.id)) continue;
    const list = byProcess.get(track.pid);
    if (list) list.push(track);
    else byProcess.set(track.pid, [track]);
  }
  const countersOf = new Map<string, TimelineCounterTrack[]>();
  for (const counter of counters) {
    if (!byProcess.has(counter.pid)) byProcess.set(counter.pid, []);
    const list = countersOf.get(counter.pid);
    if (list) list.push(counter);
    else countersOf.set(counter.pid, [counter]);
  }
  const labels = processLabels(visible, counters);
  const groups: TrackGroup[] = [...byProcess].map(([process, list]) => ({
    process,
    label: labels.get(process)!,
    tracks: list
      .map((t, rank) => ({ t, rank }))
      .sort(byKind)
      .map(({ t }) => t),
    counters: countersOf.get(process) ?? [],
  }));
  // A stable sort: processes keep the payload's order within each kind.
  groups.sort((a, b) => Number(!hasDevice(a)) - Number(!hasDevice(b)));
  const pins = visible.filter((t) => pinned.has(t.id));
  if (pins.length > 0) groups.unshift({ process: PINNED, label: 'Pinned', tracks: pins, counters: [] });
  return groups;
}

function byKind(a: { t: TimelineTrack; rank: number }, b: { t: TimelineTrack; rank: number }): number {
  return KIND_RANK[a.t.kind] - KIND_RANK[b.t.kind] || a.rank - b.rank;
}

function hasDevice(group: TrackGroup): boolean {
  return group.tracks.some((t) => t.kind === 'device');
}

/**
 * A process's header: its name, or "process PID"; where two processes share a name (Kineto names the device
 * process after the host's, "python3"), the device one says which device it is.
 */
function processLabels(
  tracks: readonly TimelineTrack[],
  counters: readonly TimelineCounterTrack[],
): Map<string, string> {
  const names = new Map<string, string>();
  for (const t of [...tracks, ...counters])
    if (!names.has(t.pid)) names.set(t.pid, t.processName || `process ${t.pid}`);
  const uses = new Map<string, number>();
  for (const name of names.values()) uses.set(name, (uses.get(name) ?? 0) + 1);
  const deviceOnly = new Set(tracks.filter((t) => t.kind === 'device').map((t) => t.pid));
  for (const t of tracks) if (t.kind !== 'device') deviceOnly.delete(t.pid);
  const labels = new Map<string, string>();
  for (const [pid, name] of names) {
    labels.set(pid, deviceOnly.has(pid) && uses.get(name)! > 1 ? `${name} · device ${pid}` : name);
  }
  return labels;
}
