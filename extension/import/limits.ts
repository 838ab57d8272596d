/**
 * What one import may take, so that a trace too large for the machine (or a gzip bomb: megabytes that inflate to
 * gigabytes) is refused with one line naming the limit, before memory runs out. Each limit comes from an import
 * option, else its environment variable, else the memory available when the import starts.
 */
import * as os from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { formatBytes, formatCount } from '../shared/format';
import { ImportError } from './errors';

export interface ImportLimitOptions {
  /** Bytes of trace text, counted after decompression (every gzip member). */
  maxTraceBytes?: number;
  /** Events of any phase. */
  maxEvents?: number;
  /** One JSON value the parser must hold whole: an event, a key, a kept top-level field. */
  maxValueBytes?: number;
  /** Growth of the process's resident memory while importing. */
  maxMemoryBytes?: number;
}

export interface Limit {
  value: number;
  /** Where the value came from, for the message: the variable that changes it. */
  variable: string;
  from: 'option' | 'environment' | 'memory' | 'fixed';
}

export interface ImportLimits {
  traceBytes: Limit;
  events: Limit;
  valueBytes: Limit;
  memoryBytes: Limit;
  /** The JS heap's limit: strings, threads and metadata live there (typed columns do not). */
  heapLimitBytes: number;
  /** Memory available when the import started (the defaults derive from it). */
  availableBytes: number;
}

/**
 * Of the memory available at the start, the share a command may take (import, analysis, timeline): the rest is
 * the system's. The byte and event limits are sized so the heaviest command (the timeline) fits in it.
 */
const COMMAND_SHARE = 0.8;
/** Of the memory available at the start, the share the import alone may grow by: the analysis needs the rest. */
const IMPORT_SHARE = 0.5;
/**
 * Peak memory per event of the heaviest command (import, analysis, timeline encoding) on a trace of minimal
 * events: 220 bytes measured on 10 M complete events (the import alone: 75; the summary: 120).
 */
const BYTES_PER_EVENT = 220;
/**
 * Peak memory per byte of trace text of the same, on real events (args kept raw, names once): measured 2.2 on
 * 1 GB of real Kineto events (the import alone: 0.9; the summary: 1.15).
 */
const BYTES_PER_TRACE_BYTE = 2;
/**
 * No event, key or field of a real trace comes near this; the names the parser holds must also stay well below
 * V8's longest string (2^29 characters).
 */
const DEFAULT_MAX_VALUE = 64 * 2 ** 20;
/** Of the JS heap's limit, the used share past which the import stops rather than crash the process. */
export const HEAP_SHARE = 0.85;

export const LIMIT_VARIABLES = {
  traceBytes: 'FLAGPROF_MAX_TRACE_BYTES',
  events: 'FLAGPROF_MAX_EVENTS',
  valueBytes: 'FLAGPROF_MAX_VALUE_BYTES',
  memoryBytes: 'FLAGPROF_MAX_MEMORY',
} as const;

/** Memory this process may still take: the cgroup's limit where there is one, else the system's available memory. */
export function availableMemory(): number {
  const fromProcess = (process as { availableMemory?: () => number }).availableMemory?.();
  const available = fromProcess && fromProcess > 0 ? fromProcess : os.freemem();
  return Math.min(available, os.totalmem());
}

const UNITS: Record<string, number> = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 };
const COUNT_UNITS: Record<string, number> = { '': 1, k: 1e3, m: 1e6, g: 1e9 };

/** "1048576", "512M", "1.5G", "64MB", "2GiB" (binary units); counts take k/M/G as thousands, millions, billions. */
function parseAmount(text: string, units: Record<string, number>): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(text);
  if (!match) return undefined;
  const scale = units[match[2].toLowerCase()];
  if (scale === undefined) return undefined;
  const value = Math.floor(Number(match[1]) * scale);
  return value > 0 && Number.isFinite(value) ? value : undefined;
}

function limit(
  file: string,
  name: keyof typeof LIMIT_VARIABLES,
  option: number | undefined,
  fallback: number,
  count: boolean,
  env: NodeJS.ProcessEnv,
  fallbackFrom: Limit['from'] = 'memory',
): Limit {
  const variable = LIMIT_VARIABLES[name];
  if (option !== undefined) return { value: option, variable, from: 'option' };
  const text = env[variable];
  if (text !== undefined && text !== '') {
    const value = parseAmount(text, count ? COUNT_UNITS : UNITS);
    if (value === undefined) {
      throw new ImportError(
        file,
        undefined,
        `${variable}=${JSON.stringify(text.slice(0, 40))} is not a ${count ? 'count (as 5000000 or 5M)' : 'size (bytes, or a number with K, M or G, as 512M)'}`,
      );
    }
    return { value, variable, from: 'environment' };
  }
  return { value: Math.max(1, Math.floor(fallback)), variable, from: fallbackFrom };
}

/** The limits of one import of `file` (named in the error a malformed variable raises). */
export function resolveLimits(
  file: string,
  options: ImportLimitOptions = {},
  env: NodeJS.ProcessEnv = process.env,
): ImportLimits {
  const availableBytes = availableMemory();
  const command = availableBytes * COMMAND_SHARE;
  return {
    traceBytes: limit(file, 'traceBytes', options.maxTraceBytes, command / BYTES_PER_TRACE_BYTE, false, env),
    events: limit(file, 'events', options.maxEvents, command / BYTES_PER_EVENT, true, env),
    valueBytes: limit(file, 'valueBytes', options.maxValueBytes, DEFAULT_MAX_VALUE, false, env, 'fixed'),
    memoryBytes: limit(
      file,
      'memoryBytes',
      options.maxMemoryBytes,
      availableBytes * IMPORT_SHARE,
      false,
      env,
    ),
    heapLimitBytes: getHeapStatistics().heap_size_limit,
    availableBytes,
  };
}

/**
 * Which limit a refusal met, and how to change it: "(the limit from FLAGPROF_MAX_EVENTS)", "(the limit for the
 * 12.0 GB of memory available; FLAGPROF_MAX_EVENTS changes it)". The message itself names the value; where it
 * does not (`value` true), the value is said here.
 */
export function describeLimit(l: Limit, limits: ImportLimits, bytes: boolean, value = false): string {
  const amount = bytes ? formatBytes(l.value) : formatCount(l.value);
  const the = value ? `the limit, ${amount},` : 'the limit';
  switch (l.from) {
    case 'option':
      return `(${the} set by the caller)`;
    case 'environment':
      return `(${the} from ${l.variable})`;
    case 'fixed':
      return `(${the}; ${l.variable} changes it)`;
    default:
      return `(${the} for the ${formatBytes(limits.availableBytes)} of memory available; ${l.variable} changes it)`;
  }
}
