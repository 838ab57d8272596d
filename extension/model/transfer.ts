/**
 * A Profile carried between threads: posted as it is (structured clone keeps its fields, Maps and bigint), its typed
 * arrays' buffers transferred rather than copied, and its classes given back on arrival. The import worker
 * (import/offThread.ts) reads a trace and hands the profile over this way.
 */
import { ArgsArena, CounterTable, FlowTable, MemoryTable, Profile, SliceTable } from './profile';
import { StringTable } from './strings';

/** A profile as posted: its own fields, without its classes. */
export type ProfileWire = { readonly wire: 'profile' } & Record<string, unknown>;

/**
 * The buffers of the typed arrays found in `value` and one level into its objects (a table's columns): what a
 * post transfers. A buffer seen twice is listed once; a shared one is never transferred.
 */
function buffersOf(value: object, into: Set<ArrayBuffer>, depth = 0): void {
  for (const field of Object.values(value)) {
    if (ArrayBuffer.isView(field)) {
      if (field.buffer instanceof ArrayBuffer) into.add(field.buffer);
    } else if (depth < 1 && field !== null && typeof field === 'object' && !(field instanceof Map)) {
      buffersOf(field as object, into, depth + 1);
    }
  }
}

/**
 * The profile to post and the buffers to transfer with it (after the post the profile's tables are detached: the
 * sender must not use it again; shared memory is shared, not transferred). With `argsInUse` its args arena is
 * still being read into (a partial profile shares it with the import): it goes as it is where it is shared memory,
 * else as a copy cut to what it holds.
 */
export function profileToWire(
  profile: Profile,
  options: { argsInUse?: boolean } = {},
): { wire: ProfileWire; transfer: ArrayBuffer[] } {
  const fields: Record<string, unknown> = { ...profile };
  if (options.argsInUse && !profile.args.isShared) {
    const { bytes, offsets } = profile.args.raw();
    const copy = new ArgsArena();
    copy.appendBlock(bytes, offsets, 0, profile.args.length);
    fields.args = copy;
  }
  const buffers = new Set<ArrayBuffer>();
  buffersOf(fields, buffers);
  return { wire: { ...fields, wire: 'profile' }, transfer: [...buffers] };
}

/** The profile a wire carried, its classes restored (their fields are all data: the clone kept them as they were). */
export function profileFromWire(wire: ProfileWire): Profile {
  const { wire: _kind, ...fields } = wire;
  const restore = <T extends object>(value: unknown, type: { prototype: T }): T =>
    Object.setPrototypeOf(value as object, type.prototype) as T;
  const profile = restore(fields, Profile);
  restore(profile.strings, StringTable);
  restore(profile.slices, SliceTable);
  restore(profile.flows, FlowTable);
  restore(profile.args, ArgsArena);
  if (profile.counters) restore(profile.counters, CounterTable);
  if (profile.memory) restore(profile.memory, MemoryTable);
  return profile;
}
