/**
 * Memory per device and per source line, from the profile's memory samples (torch's `[memory]` events):
 *  - peak allocated and reserved per device, and when: the allocator's own totals where the trace has them,
 *    else (2021 traces write only Bytes) the running sum of the window's deltas, which counts from 0;
 *  - per line (the line of the op that was running, as every view attributes it): bytes allocated and freed there,
 *    and what the line's allocations still held at its device's peak (frees matched to allocations by Addr).
 * A sample with no op around it (a tensor freed by Python between ops) counts for its device, on no line.
 */
import { deviceName, type MemoryTable } from '../model/profile';
import type { Analysis } from './types';

const CPU_DEVICE_TYPE = 0;

export interface DeviceMemory {
  /** As torch names it: `cpu`, `cuda:0`. */
  device: string;
  samples: number;
  allocations: number;
  frees: number;
  allocatedBytes: number;
  freedBytes: number;
  /** Highest total allocated, and its time (ns, relative like slice times); the sample it was reached at. */
  peakAllocatedBytes: number;
  peakAllocatedNs: number;
  peakSample: number;
  /** Highest total reserved (the caching allocator's pool), undefined where the trace writes none. */
  peakReservedBytes?: number;
  peakReservedNs?: number;
  /** 'trace': the allocator's totals; 'deltas': summed from Bytes within the window (they start at 0). */
  totals: 'trace' | 'deltas';
}

export interface LineMemory {
  /** Index into Analysis.lines. */
  line: number;
  device: string;
  allocations: number;
  frees: number;
  allocatedBytes: number;
  freedBytes: number;
  /** allocatedBytes - freedBytes. */
  netBytes: number;
  /** Bytes this line allocated that were still held at its device's peak; undefined without Addr. */
  atPeakBytes?: number;
}

export interface MemoryStats {
  devices: DeviceMemory[];
  /** Largest allocatedBytes first. */
  lines: LineMemory[];
  /** Per device: bytes allocated and freed on no user line (no op around, or an op on no line). */
  unattributed: { device: string; allocatedBytes: number; freedBytes: number }[];
  /** The last allocations before the profile ends, oldest first: what a run that died of OOM was doing. */
  lastAllocations: LastAllocation[];
}

export interface LastAllocation {
  device: string;
  timeNs: number;
  bytes: number;
  /** The device's total allocated after it (NaN where the trace writes none). */
  allocatedBytes: number;
  /** Index into Analysis.lines, or -1. */
  line: number;
}

/** Allocations kept for the end of the run. */
const LAST_ALLOCATIONS = 5;

/** Memory per device and line; undefined when the profile has no memory samples. */
export function analyzeMemory(analysis: Analysis): MemoryStats | undefined {
  const memory = analysis.profile.memory;
  if (!memory || memory.length === 0) return undefined;
  const deviceOf = deviceIndex(memory);
  const devices = deviceOf.names.map((name, d) => devicePeak(analysis, memory, deviceOf.of, d, name));
  const { lines, unattributed } = lineMemory(analysis, memory, deviceOf, devices);
  return { devices, lines, unattributed, lastAllocations: lastAllocations(analysis, memory, deviceOf) };
}

function lastAllocations(analysis: Analysis, memory: MemoryTable, deviceOf: DeviceIndex): LastAllocation[] {
  const last: LastAllocation[] = [];
  for (let i = memory.length - 1; i >= 0 && last.length < LAST_ALLOCATIONS; i--) {
    if (memory.bytes[i] <= 0) continue;
    last.push({
      device: deviceOf.names[deviceOf.of[i]],
      timeNs: analysis.profile.slices.start[memory.event[i]],
      bytes: memory.bytes[i],
      allocatedBytes: memory.allocated[i],
      line: lineOfSample(analysis, memory, i),
    });
  }
  return last.reverse();
}

interface DeviceIndex {
  names: string[];
  /** Per sample: index into names. */
  of: Int32Array;
}

function deviceIndex(memory: MemoryTable): DeviceIndex {
  const byName = new Map<string, number>();
  const names: string[] = [];
  const of = new Int32Array(memory.length);
  for (let i = 0; i < memory.length; i++) {
    const name = deviceName(memory.deviceType[i], memory.deviceId[i]);
    let d = byName.get(name);
    if (d === undefined) {
      d = names.length;
      names.push(name);
      byName.set(name, d);
    }
    of[i] = d;
  }
  return { names, of };
}

function devicePeak(
  analysis: Analysis,
  memory: MemoryTable,
  deviceOf: Int32Array,
  d: number,
  device: string,
): DeviceMemory {
  const start = analysis.profile.slices.start;
  const stats: DeviceMemory = {
    device,
    samples: 0,
    allocations: 0,
    frees: 0,
    allocatedBytes: 0,
    freedBytes: 0,
    peakAllocatedBytes: Number.NEGATIVE_INFINITY,
    peakAllocatedNs: 0,
    peakSample: -1,
    totals: 'trace',
  };
  let fromTrace = true;
  for (let i = 0; i < memory.length; i++)
    if (deviceOf[i] === d && Number.isNaN(memory.allocated[i])) fromTrace = false;
  let running = 0;
  let peakReserved = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < memory.length; i++) {
    if (deviceOf[i] !== d) continue;
    const bytes = memory.bytes[i];
    stats.samples++;
    if (bytes >= 0) {
      stats.allocations++;
      stats.allocatedBytes += bytes;
    } else {
      stats.frees++;
      stats.freedBytes -= bytes;
    }
    running += bytes;
    const total = fromTrace ? memory.allocated[i] : running;
    const t = start[memory.event[i]];
    if (total > stats.peakAllocatedBytes) {
      stats.peakAllocatedBytes = total;
      stats.peakAllocatedNs = t;
      stats.peakSample = i;
    }
    if (memory.reserved[i] > peakReserved) {
      peakReserved = memory.reserved[i];
      stats.peakReservedNs = t;
    }
  }
  // The CPU allocator keeps no pool: its "Total Reserved" is always 0, which is no peak to show.
  if (Number.isFinite(peakReserved) && memory.deviceType[stats.peakSample] !== CPU_DEVICE_TYPE)
    stats.peakReservedBytes = peakReserved;
  else delete stats.peakReservedNs;
  if (!fromTrace) stats.totals = 'deltas';
  return stats;
}

/** Per (line, device): what the line's ops allocated and freed, and what its allocations held at the peak. */
function lineMemory(
  analysis: Analysis,
  memory: MemoryTable,
  deviceOf: DeviceIndex,
  devices: DeviceMemory[],
): Pick<MemoryStats, 'lines' | 'unattributed'> {
  const rows = new Map<number, LineMemory>();
  const unattributed = deviceOf.names.map((device) => ({ device, allocatedBytes: 0, freedBytes: 0 }));
  const deviceCount = deviceOf.names.length;
  for (let i = 0; i < memory.length; i++) {
    const d = deviceOf.of[i];
    const line = lineOfSample(analysis, memory, i);
    const bytes = memory.bytes[i];
    if (line < 0) {
      if (bytes >= 0) unattributed[d].allocatedBytes += bytes;
      else unattributed[d].freedBytes -= bytes;
      continue;
    }
    const key = line * deviceCount + d;
    let row = rows.get(key);
    if (!row) {
      row = {
        line,
        device: deviceOf.names[d],
        allocations: 0,
        frees: 0,
        allocatedBytes: 0,
        freedBytes: 0,
        netBytes: 0,
      };
      rows.set(key, row);
    }
    if (bytes >= 0) {
      row.allocations++;
      row.allocatedBytes += bytes;
    } else {
      row.frees++;
      row.freedBytes -= bytes;
    }
    row.netBytes += bytes;
  }
  heldAtPeak(analysis, memory, deviceOf, devices, rows);
  const lines = [...rows.values()].sort(
    (a, b) => b.allocatedBytes - a.allocatedBytes || a.line - b.line || compare(a.device, b.device),
  );
  return { lines, unattributed: unattributed.filter((u) => u.allocatedBytes > 0 || u.freedBytes > 0) };
}

function lineOfSample(analysis: Analysis, memory: MemoryTable, i: number): number {
  const op = memory.op[i];
  return op >= 0 ? analysis.lineOf[op] : -1;
}

/**
 * Replays each device's allocations up to its peak, matching frees to allocations by Addr, and charges what is
 * still held to the line that allocated it. Blocks allocated before the window are unknown and charged to none.
 */
function heldAtPeak(
  analysis: Analysis,
  memory: MemoryTable,
  deviceOf: DeviceIndex,
  devices: DeviceMemory[],
  rows: Map<number, LineMemory>,
): void {
  const deviceCount = deviceOf.names.length;
  for (let d = 0; d < deviceCount; d++) {
    const peak = devices[d].peakSample;
    const live = new Map<number, { key: number; bytes: number }>();
    let addressed = true;
    for (let i = 0; i <= peak; i++) {
      if (deviceOf.of[i] !== d) continue;
      const addr = memory.addr[i];
      if (Number.isNaN(addr)) {
        addressed = false;
        break;
      }
      const bytes = memory.bytes[i];
      if (bytes < 0) {
        live.delete(addr);
        continue;
      }
      const line = lineOfSample(analysis, memory, i);
      live.set(addr, { key: line < 0 ? -1 : line * deviceCount + d, bytes });
    }
    if (!addressed) continue;
    for (const [key, row] of rows) if (key % deviceCount === d) row.atPeakBytes = 0;
    for (const { key, bytes } of live.values()) {
      const row = rows.get(key);
      if (row) row.atPeakBytes = (row.atPeakBytes ?? 0) + bytes;
    }
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
