/**
 * The Results view's model: what a run (or any opened trace) comes to, in one message — how it ended, the capture
 * mode and why, wall/CPU/device totals, device busy and idle, steps, memory peaks, and the top lines, ops and
 * kernels. Times in ns relative to the profile's first event; built on the host (extension/capture/results.ts).
 */

export type ResultsSeverity = 'ok' | 'warning' | 'error';

export interface ResultsLine {
  file: string;
  line: number;
  column?: number;
  function: string;
  /** Absent on an exact line; else 'function', 'backward' or 'trace'. */
  kind?: string;
  selfNs: number;
  totalNs: number;
  ops: number;
}

export interface ResultsModel {
  title: string;
  /** The trace or session folder the model was built from. */
  source: string;
  script?: string;
  ended: { text: string; severity: ResultsSeverity };
  mode?: { chosen: string; reason?: string };
  /** 'device' when the profile has device activity: the lines, ops and kernels are ranked by it. */
  primary: 'device' | 'cpu';
  totals: { wallNs?: number; spanNs: number; cpuNs: number; deviceNs: number };
  /** Device activity: the share of its span some device was busy, and the largest idle gaps (all devices idle). */
  device?: { busyNs: number; spanNs: number; gaps: { startNs: number; durNs: number }[] };
  steps?: {
    rows: { step: number; wallNs: number; cpuNs: number; deviceNs: number }[];
    slowest: number;
    firstNs: number;
    steadyMedianNs?: number;
  };
  memory?: { device: string; peakBytes: number; atNs: number }[];
  /** A run of several ranks (a torchrun session, a folder of rank traces): communication per rank and collective. */
  ranks?: RanksOverview;
  lines: ResultsLine[];
  ops: { name: string; calls: number; selfNs: number; totalNs: number }[];
  kernels: { name: string; count: number; totalNs: number; topOp: string }[];
  notes: string[];
  /** What the buttons can reach: a timeline always; bring-up checks and output only for a session. */
  canOpenBringup: boolean;
  canShowOutput: boolean;
}

/** What a run of several ranks comes to in communication (analysis/collectives.ts, ranksCollectives.ts). */
export interface RanksOverview {
  rows: {
    rank: string;
    /** Time in collectives (a union of intervals), and the part no other device work overlaps. */
    commNs: number;
    exposedNs: number;
    /** Collectives this rank started last, the waits it caused the others, and its own waits. */
    stragglerCount: number;
    waitCausedNs: number;
    waitSufferedNs: number;
  }[];
  /** The most waited-for collectives, longest wait first. */
  collectives: {
    name: string;
    group: string;
    size?: number;
    medianNs: number;
    maxNs: number;
    straggler: string;
    maxWaitNs: number;
  }[];
  /** Why the figures read as they do (no device to overlap; clocks that look offset). */
  notes: string[];
}
