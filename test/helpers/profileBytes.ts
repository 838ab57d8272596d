/**
 * A Profile as bytes and plain values, for telling two importers' models apart exactly: every column up to its
 * length by its bytes (NaN bit patterns included), the strings in id order, tracks, args, flows, counters, memory,
 * sites, warnings and metadata.
 */
import { createHash } from 'node:crypto';
import type { Profile } from '../../extension/model/profile';

type Column = Float64Array | Uint32Array | Int32Array | Uint16Array | Int16Array | Uint8Array;

function bytesOf(column: Column, length: number): string {
  const view = new Uint8Array(column.buffer, column.byteOffset, length * column.BYTES_PER_ELEMENT);
  return createHash('sha256').update(view).digest('hex');
}

export function profileBytes(profile: Profile): Record<string, unknown> {
  const { slices, flows, args } = profile;
  const n = slices.length;
  const raw = args.raw();
  const out: Record<string, unknown> = {
    format: profile.format,
    originNs: String(profile.originNs),
    eventCount: profile.eventCount,
    strings: createHash('sha256').update(JSON.stringify(profile.strings.all())).digest('hex'),
    stringCount: profile.strings.size,
    slices: n,
    flows: flows.length,
    args: args.length,
    argsBytes: createHash('sha256').update(raw.bytes).digest('hex'),
    argsOffsets: bytesOf(raw.offsets, raw.offsets.length),
    tracks: JSON.stringify(profile.tracks),
    byTrack: [
      bytesOf(profile.byTrack.order, profile.byTrack.order.length),
      bytesOf(profile.byTrack.offsets, profile.byTrack.offsets.length),
    ],
    warnings: profile.warnings,
    metadata: JSON.stringify(profile.metadata, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)),
    sites: profile.sites ? JSON.stringify([...profile.sites]) : null,
  };
  for (const key of [
    'kind',
    'track',
    'depth',
    'start',
    'dur',
    'name',
    'cat',
    'correlation',
    'externalId',
    'parent',
    'args',
  ] as const)
    out[`slices.${key}`] = bytesOf(slices[key], n);
  for (const key of ['cat', 'id', 'phase', 'ts', 'track', 'slice'] as const)
    out[`flows.${key}`] = bytesOf(flows[key], flows.length);
  const counters = profile.counters;
  if (counters) {
    out.counters = [counters.length, String(counters.originNs), counters.skipped, counters.skippedExample];
    for (const key of ['name', 'series', 'track', 'ts', 'value'] as const)
      out[`counters.${key}`] = bytesOf(counters[key], counters.length);
  }
  const memory = profile.memory;
  if (memory) {
    out.memory = memory.length;
    for (const key of [
      'event',
      'deviceType',
      'deviceId',
      'bytes',
      'allocated',
      'reserved',
      'addr',
      'op',
    ] as const)
      out[`memory.${key}`] = bytesOf(memory[key] as Column, memory.length);
  }
  return out;
}
