/** Category-level indexes over a Profile that the checks share (built once per run). */
import type { Profile } from '../../model/profile';
import { FlowPhase, SliceKind } from '../../model/profile';
import type { CaptureWindow, EvidenceEvent } from './types';

export interface FlowHalf {
  index: number;
  id: string;
  /** The slice the half binds to, -1 when none. */
  slice: number;
}

/**
 * The 2020-21 category names (torch 1.8-1.9, the TensorBoard plugin's traces) read as today's: the checks compare
 * structure, and these events are the same events under older names. Their args spell "external id" in lower case.
 */
export const ERA_2021_CATEGORIES: Record<string, string> = {
  Operator: 'cpu_op',
  Runtime: 'cuda_runtime',
  Kernel: 'kernel',
  Memcpy: 'gpu_memcpy',
  Memset: 'gpu_memset',
};

export class TraceView {
  /** Slice indices per category, every phase (the parity helpers' events_in). */
  readonly byCat = new Map<string, number[]>();
  /** Categories of complete (non-instant) events with a category. */
  readonly completeCategories = new Set<string>();
  private argsCache = new Map<number, Record<string, unknown>>();
  /** Older category names found and what they are read as (2021: Operator -> cpu_op, ...). */
  readonly aliased = new Map<string, string>();

  constructor(
    readonly profile: Profile,
    readonly window: CaptureWindow | undefined,
  ) {
    const s = profile.slices;
    for (let i = 0; i < s.length; i++) {
      const cat = this.categoryOf(i);
      let list = this.byCat.get(cat);
      if (!list) this.byCat.set(cat, (list = []));
      list.push(i);
      if (cat && s.kind[i] !== SliceKind.Instant) this.completeCategories.add(cat);
    }
  }

  /** The slice's category, under today's name when the trace uses a 2021 one. */
  categoryOf(i: number): string {
    const raw = this.profile.categoryOf(i);
    const today = ERA_2021_CATEGORIES[raw];
    if (!today) return raw;
    this.aliased.set(raw, today);
    return today;
  }

  /** Events of a category, any phase (parity semantics). */
  eventsIn(cat: string): number[] {
    return this.byCat.get(cat) ?? [];
  }

  /** Complete events of a category (contract semantics: ph == "X"). */
  completeIn(cat: string): number[] {
    return this.eventsIn(cat).filter((i) => this.profile.slices.kind[i] !== SliceKind.Instant);
  }

  args(i: number): Record<string, unknown> {
    let a = this.argsCache.get(i);
    if (!a) {
      a = this.profile.argsOf(i);
      if (
        a['external id'] !== undefined &&
        a['External id'] === undefined &&
        this.profile.categoryOf(i) in ERA_2021_CATEGORIES
      ) {
        a['External id'] = a['external id'];
        delete a['external id'];
      }
      this.argsCache.set(i, a);
    }
    return a;
  }

  argKeyUnion(events: number[]): Set<string> {
    const keys = new Set<string>();
    for (const i of events)
      if (this.profile.slices.args[i] >= 0) for (const k of Object.keys(this.args(i))) keys.add(k);
    return keys;
  }

  /** Flow halves of one category by phase. */
  flows(cat: string): { starts: FlowHalf[]; finishes: FlowHalf[] } {
    const f = this.profile.flows;
    const strings = this.profile.strings;
    const starts: FlowHalf[] = [];
    const finishes: FlowHalf[] = [];
    for (let i = 0; i < f.length; i++) {
      if (strings.get(f.cat[i]) !== cat) continue;
      const half = { index: i, id: strings.get(f.id[i]), slice: f.slice[i] };
      if (f.phase[i] === FlowPhase.Start) starts.push(half);
      else if (f.phase[i] === FlowPhase.Finish) finishes.push(half);
    }
    return { starts, finishes };
  }

  flowCategories(): Set<string> {
    const out = new Set<string>();
    const f = this.profile.flows;
    for (let i = 0; i < f.length; i++) out.add(this.profile.strings.get(f.cat[i]));
    return out;
  }

  /** External id -> name over cpu_op events; later duplicates overwrite earlier ones (as upstream). */
  opNameByExternalId(completeOnly: boolean): Map<number, string> {
    const out = new Map<number, string>();
    for (const i of completeOnly ? this.completeIn('cpu_op') : this.eventsIn('cpu_op')) {
      const id = this.externalId(i);
      if (id !== undefined) out.set(id, this.profile.nameOf(i));
    }
    return out;
  }

  externalId(i: number): number | undefined {
    const v = this.profile.slices.externalId[i];
    if (!Number.isNaN(v)) return v;
    const a = this.args(i)['External id'];
    return typeof a === 'number' ? a : undefined;
  }

  correlation(i: number): number | undefined {
    const v = this.profile.slices.correlation[i];
    if (!Number.isNaN(v)) return v;
    const a = this.args(i).correlation;
    return typeof a === 'number' ? a : undefined;
  }

  durUs(i: number): number {
    return this.profile.slices.dur[i] / 1000;
  }

  evidence(i: number, note?: string): EvidenceEvent {
    const s = this.profile.slices;
    const base = this.window ? this.window.startNs : 0;
    const e: EvidenceEvent = {
      // As the file writes it (2021 traces: Kernel, Runtime, ...): evidence quotes the trace.
      cat: this.profile.categoryOf(i),
      name: truncate(this.profile.nameOf(i), 120),
      tsUs: round3((s.start[i] - base) / 1000),
      durUs: round3(s.dur[i] / 1000),
    };
    const corr = this.correlation(i);
    if (corr !== undefined) e.correlation = corr;
    const ext = this.externalId(i);
    if (ext !== undefined) e.externalId = ext;
    if (note) e.note = note;
    return e;
  }

  /** The first ten events as a result's evidence. */
  examples(events: readonly number[]): EvidenceEvent[] {
    return events.slice(0, 10).map((i) => this.evidence(i));
  }
}

export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function histogram(values: Iterable<string>): [string, number][] {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

export function formatHistogram(h: [string, number][], max = 15): string {
  const shown = h.slice(0, max).map(([k, v]) => `${k} ×${v}`);
  return h.length > max ? `${shown.join(', ')}, … (${h.length - max} more)` : shown.join(', ');
}
