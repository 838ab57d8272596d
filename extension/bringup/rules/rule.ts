/**
 * What a catalogue rule is, and the pieces its pattern and its reading are built from. A rule reads one line
 * of one component: its pattern is the line's full text, its parse says what the line means for bring-up.
 */
import { CAPTURE_EVENT_KIND_NAMES } from '../../shared/kinds';
import type { Component, Severity } from '../types';

/** What a line means: its grade, one sentence, and the values lifted out of it. */
export interface Parsed {
  severity: Severity;
  message: string;
  counts?: Record<string, number>;
  fields?: Record<string, string>;
}

export interface Rule {
  /** Catalogue id (A4, C16, ...): unique within the component. */
  code: string;
  component: Component;
  /** Matched against the text from the '[flagos' prefix on. */
  pattern: RegExp;
  /** Printed even with FLAGOS_TRACE off. */
  ungated?: boolean;
  /** Header of a warning whose continuation lines ('[flagos]   ...') belong to it. */
  multiline?: boolean;
  /** Reads a continuation line of a multiline warning into the diagnostic's fields. */
  continuation?(fields: Record<string, string>, raw: string): void;
  parse(m: RegExpExecArray): Parsed;
}

/** EventKind codes printed as kind=<K>. */
/** The event kinds a FLAGOS_TRACE line names by number (the driver kind is never printed there). */
export const EVENT_KIND_NAMES = CAPTURE_EVENT_KIND_NAMES.slice(0, 4);

export function kindName(code: string): string {
  return EVENT_KIND_NAMES[Number(code)] ?? `kind${code}`;
}

/** A matched number group as a number. */
export const n = Number;
export const F = '\\[flagos\\] ';
export const SHIM = '\\[flagos-cupti-shim\\] ';
/** A signed number group (results, ids). */
export const R = '(-?\\d+)';
/** An unsigned number group (counts, timestamps). */
export const U = '(\\d+)';

export function rx(prefix: string, body: string, anchoredEnd = true): RegExp {
  return new RegExp(`^${prefix}${body}${anchoredEnd ? '\\s*$' : ''}`);
}

export function resultSeverity(result: number, bad: Severity = 'warning'): Severity {
  return result === 0 ? 'info' : bad;
}

/** Parses 'A=1, B=2' and 'A=1 B=2' lists into counts. */
export function keyValues(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/([A-Z_a-z][A-Z_a-z0-9]*)=(-?\d+)/g)) out[m[1]] = n(m[2]);
  return out;
}

/** Non-numeric values of a key=value list ('KERNEL=skipped'). */
export function wordValues(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/([A-Z_][A-Z_0-9]*)=([A-Za-z][\w-]*)/g)) out[m[1]] = m[2];
  return out;
}

export function info(
  message: string,
  counts?: Record<string, number>,
  fields?: Record<string, string>,
): Parsed {
  return { severity: 'info', message, counts, fields };
}

/** A bufferRequested callback: one more buffer handed to the vendor library. */
export function bufferRequested(): Parsed {
  return { severity: 'debug', message: 'Activity buffer requested.', counts: { buffersRequested: 1 } };
}

/** A bufferCompleted callback with its valid size in m[1]: an empty buffer is worth a warning. */
export function bufferCompleted(m: RegExpExecArray): Parsed {
  return m[1] === '0'
    ? {
        severity: 'warning',
        message: 'An activity buffer completed empty.',
        counts: { buffersCompleted: 1, validSize: 0 },
      }
    : {
        severity: 'debug',
        message: 'Activity buffer completed.',
        counts: { buffersCompleted: 1, validSize: n(m[1]) },
      };
}

/**
 * Grades the setup results printed at session start (0 = enabled): a failed kind the capture cannot do without
 * is an error, any other failure a warning.
 */
export function setupSeverity(
  results: Record<string, number>,
  essential: readonly string[],
): 'error' | 'warning' | 'info' {
  if (essential.some((kind) => (results[kind] ?? 0) !== 0)) return 'error';
  return Object.values(results).some((v) => v !== 0) ? 'warning' : 'info';
}
