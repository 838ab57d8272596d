/**
 * Several processes' profiles (the ranks of a torchrun run, a folder of rank traces) as one profile: each part a
 * track group of its own ("Rank 3"), on one clock. Linking, attribution, lines, the timeline and the tables then
 * run on the whole run unchanged.
 *
 * Clocks: every part keeps its own absolute time (Kineto writes epoch microseconds, or times relative to
 * baseTimeNanoseconds, which the importer has already applied), so the parts line up as their hosts' clocks do;
 * ranks of one node share a clock. Skew between nodes is not corrected here: the collectives analysis
 * estimates it from the collectives' end times and says so.
 *
 * Ids: torch's External ids and the vendors' correlation ids are per process, so the same number on two ranks
 * names two different ops. Each part's ids are moved into a range of their own (part index × 2^40 added: ids stay
 * exact in a float64 up to 8 191 parts of 2^40 ids), and flow ids are prefixed with the part, so no link, flow or
 * call site crosses from one rank to another.
 */
import { CounterTable, MemoryTable, Profile, type SourceFrame, type Track } from '../model/profile';
import { reindex } from './finish';

/** One process's profile and its label on the timeline ("Rank 3", "worker 1"). */
export interface ProfilePart {
  label: string;
  profile: Profile;
}

/** Where part k's ids begin: ids of one process stay far below 2^40 (a trillion launches). */
const ID_RANGE = 2 ** 40;

/** The part a merged id belongs to, and its own id: for readers that show the trace's ids. */
export function partOfId(id: number): { part: number; id: number } {
  const part = Math.floor(id / ID_RANGE);
  return { part, id: id - part * ID_RANGE };
}

export function mergeProfiles(parts: readonly ProfilePart[], path: string): Profile {
  if (parts.length === 0) throw new Error('mergeProfiles: no parts');
  const merged = new Profile(path);
  let origin = parts[0].profile.originNs;
  for (const { profile } of parts) if (profile.originNs < origin) origin = profile.originNs;
  merged.originNs = origin;
  merged.format = parts[0].profile.format;
  const sites = new Map<number, SourceFrame[]>();
  let memory: MemoryTable | undefined;
  let counters: CounterTable | undefined;
  const labels: string[] = [];
  parts.forEach(({ label, profile }, k) => {
    labels.push(label);
    const shiftNs = Number(profile.originNs - origin);
    const idBase = k * ID_RANGE;
    const sliceBase = merged.slices.length;
    const trackIds = mergeTracks(merged, profile, label, k);
    const strings = profile.strings;
    const name = new Uint32Array(strings.size);
    for (let s = 0; s < strings.size; s++) name[s] = merged.strings.intern(strings.get(s));
    const { bytes, offsets } = profile.args.raw();
    const argsBase = merged.args.appendBlock(bytes, offsets, 0, profile.args.length);
    const { slices } = profile;
    for (let i = 0; i < slices.length; i++) {
      const args = slices.args[i];
      merged.slices.push(
        slices.kind[i],
        trackIds[slices.track[i]],
        slices.start[i] + shiftNs,
        slices.dur[i],
        name[slices.name[i]],
        name[slices.cat[i]],
        slices.correlation[i] + idBase,
        slices.externalId[i] + idBase,
        args < 0 ? -1 : args + argsBase,
      );
    }
    const { flows } = profile;
    for (let f = 0; f < flows.length; f++) {
      const id = merged.strings.intern(`${k}:${strings.get(flows.id[f])}`);
      merged.flows.push(
        name[flows.cat[f]],
        id,
        flows.phase[f],
        flows.ts[f] + shiftNs,
        trackIds[flows.track[f]],
      );
    }
    for (const [externalId, chain] of profile.sites ?? []) sites.set(externalId + idBase, chain);
    if (profile.memory) memory = appendMemory(memory ?? new MemoryTable(), profile.memory, sliceBase);
    if (profile.counters) {
      counters ??= Object.assign(new CounterTable(), { originNs: origin });
      appendCounters(counters, profile.counters, name, trackIds, Number(profile.counters.originNs - origin));
    }
    merged.eventCount += profile.eventCount;
    for (const w of profile.warnings) merged.warnings.push({ message: `${label}: ${w.message}` });
  });
  merged.slices.compact();
  memory?.compact();
  merged.sites = sites.size > 0 ? sites : undefined;
  merged.memory = memory;
  counters?.compact();
  merged.counters = counters;
  Object.assign(merged.metadata, parts[0].profile.metadata);
  merged.metadata.parts = parts.map(({ label, profile }) => ({
    label,
    path: profile.path,
    originNs: profile.originNs.toString(),
    distributedInfo: profile.metadata.distributedInfo,
  }));
  reindex(merged);
  return merged;
}

/** A part's tracks in the merged profile: one process per part, its processes' tracks as rows inside it. */
function mergeTracks(merged: Profile, part: Profile, label: string, k: number): Uint32Array {
  const ids = new Uint32Array(part.tracks.length);
  const pids = new Set(part.tracks.map((t) => t.pid));
  for (const t of part.tracks) {
    const track: Track = {
      id: merged.tracks.length,
      pid: label,
      tid: `${t.pid}/${t.tid}`,
      kind: t.kind,
      name: rowName(t, pids.size > 1),
      processName: label,
      processSortIndex: k,
      // Rows keep their process's order, then their own, inside the part.
      threadSortIndex: (t.processSortIndex || 0) * 2 ** 20 + (t.threadSortIndex || 0),
      sliceCount: 0,
      maxDepth: 0,
    };
    merged.tracks.push(track);
    ids[t.id] = track.id;
  }
  return ids;
}

/** A row's name inside its part: a device stream says which device; other rows which process they came from. */
function rowName(t: Track, severalProcesses: boolean): string {
  const name = t.name.trim();
  if (t.kind === 'device') return /^\d+$/.test(t.pid) ? `device ${t.pid} · ${name}` : `${t.pid} · ${name}`;
  if (!severalProcesses || !t.processName) return name;
  return name.includes(t.processName) ? name : `${t.processName} › ${name}`;
}

function appendMemory(into: MemoryTable, from: MemoryTable, sliceBase: number): MemoryTable {
  for (let i = 0; i < from.length; i++) {
    into.push(
      from.event[i] + sliceBase,
      from.deviceType[i],
      from.deviceId[i],
      from.bytes[i],
      from.allocated[i],
      from.reserved[i],
      from.addr[i],
      from.op[i] < 0 ? -1 : from.op[i] + sliceBase,
    );
  }
  return into;
}

/** A part's counter samples, in the merged origin's frame (CounterTable times keep the frame they were read in). */
function appendCounters(
  into: CounterTable,
  from: CounterTable,
  name: Uint32Array,
  trackIds: Uint32Array,
  shiftNs: number,
): void {
  for (let i = 0; i < from.length; i++)
    into.push(
      name[from.name[i]],
      name[from.series[i]],
      trackIds[from.track[i]],
      from.ts[i] + shiftNs,
      from.value[i],
    );
  into.skipped += from.skipped;
  if (!into.skippedExample) into.skippedExample = from.skippedExample;
}
