/**
 * What a catalogue rule is, and the pieces its pattern and its reading are built from. A rule reads one line of
 * one component, or one message template that several vendors print in the same words (then the vendor named in
 * the line picks that vendor's catalogue line): its pattern is the line's full text, its parse says what the line
 * means for bring-up.
 */
import { CAPTURE_EVENT_KIND_NAMES } from '../../shared/kinds';
import { VENDORS, type VendorKey } from '../../shared/vendors';
import type { Component, Severity } from '../types';

/** A catalogue line: its id (A4, C16, ...), unique within the component that prints it. */
export interface LineId {
  code: string;
  component: Component;
}

/** What a line means: its grade, one sentence, and the values lifted out of it. */
export interface Parsed {
  severity: Severity;
  message: string;
  counts?: Record<string, number>;
  fields?: Record<string, string>;
  /** Which of the rule's lines it is; the first when absent. */
  line?: LineId;
}

export interface Rule {
  /** The catalogue lines the pattern reads: one, or one per vendor that prints the same template. */
  lines: readonly LineId[];
  /** Matched against the text from the '[flagos' prefix on. */
  pattern: RegExp;
  /** Printed even with FLAGOS_TRACE off. */
  ungated?: boolean;
  /** Header of a warning whose continuation lines ('[flagos]   ...') belong to it. */
  multiline?: boolean;
  /** Reads a continuation line of a multiline warning (the header read as `line`) into the diagnostic's fields. */
  continuation?(fields: Record<string, string>, raw: string, line: LineId): void;
  parse(m: RegExpExecArray): Parsed;
}

/** One vendor's line of a template several vendors print. */
export interface VendorLine {
  /** How the line names the vendor there: its label, its library, its function. */
  word: string;
  code: string;
  /** The component printing it, where not the vendor's own (the CUPTI family's binding prints MUPTI's lines). */
  component?: Component;
}

/** A template rule's line with the vendor it is. */
export type MatchedLine<L extends VendorLine> = L & { vendor: VendorKey; id: LineId };

export interface TemplateSpec<L extends VendorLine> {
  /** Each vendor that prints the template, with its word and code (and what else its meaning needs). */
  lines: Partial<Record<VendorKey, L>>;
  /**
   * The pattern, given the group that matches the vendors' words (a capture group: numbered where it stands) and
   * a non-capturing group of their labels.
   */
  pattern(vendorGroup: string, labelGroup: string): RegExp;
  ungated?: boolean;
  multiline?: boolean;
  continuation?(fields: Record<string, string>, raw: string, line: MatchedLine<L>): void;
  parse(m: RegExpExecArray, line: MatchedLine<L>): Parsed;
}

const escapeRx = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const alternation = (words: readonly string[]): string =>
  // Longest first, so that no word stops the match at a shorter one it begins with.
  [...words]
    .sort((a, b) => b.length - a.length)
    .map(escapeRx)
    .join('|');

/**
 * One rule for a message template several vendors print in the same words: the vendor's word in the line picks
 * its row, and the row the catalogue code (and component) of that vendor's line.
 */
export function template<L extends VendorLine>(spec: TemplateSpec<L>): Rule {
  const matched = (Object.entries(spec.lines) as [VendorKey, L][]).map(([vendor, line]): MatchedLine<L> => ({
    ...line,
    vendor,
    id: { code: line.code, component: line.component ?? VENDORS[vendor].component },
  }));
  // Two vendors whose lines are one catalogue line (MCPTI's through the CUPTI tracer) are one of the rule's lines.
  const lines = matched
    .map((line) => line.id)
    .filter((id, i, all) => all.findIndex((o) => o.code === id.code && o.component === id.component) === i);
  const byWord = new Map(matched.map((line) => [line.word, line]));
  const labels = [...new Set(matched.map((line) => VENDORS[line.vendor].label))];
  const { continuation } = spec;
  return {
    lines,
    pattern: spec.pattern(
      `(?<vendor>${alternation(matched.map((line) => line.word))})`,
      `(?:${alternation(labels)})`,
    ),
    ungated: spec.ungated,
    multiline: spec.multiline,
    continuation:
      continuation &&
      ((fields, raw, id) =>
        continuation(
          fields,
          raw,
          matched.find((l) => l.id.code === id.code && l.id.component === id.component)!,
        )),
    parse: (m) => {
      const line = byWord.get(m.groups?.vendor ?? '')!;
      return { ...spec.parse(m, line), line: line.id };
    },
  };
}

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
