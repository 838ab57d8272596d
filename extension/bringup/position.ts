/**
 * Where an evidence event is written in an uncompressed trace file, so that a failing check's Problems entry opens
 * the trace at that event instead of at its first byte. The event is found by its name, its category and, when it
 * has one, its correlation id, between the neighbouring "name" keys of the text (one event object); without a
 * correlation id it is the first event of that name and category.
 */
import type { EvidenceEvent } from '../shared/checks';

export interface TextPosition {
  /** 0-based, as editors count. */
  line: number;
  character: number;
}

/** Looks at this many occurrences of the name at most: a name repeated a million times is not worth scanning. */
const MAX_CANDIDATES = 10_000;

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The "name" keys of the event's name; a name the evidence cut ("…" at its end) by the part it kept. */
function nameKeys(name: string): RegExp {
  const cut = name.endsWith('…');
  const quoted = JSON.stringify(cut ? name.slice(0, -1) : name);
  return new RegExp(`"name"\\s*:\\s*${escaped(cut ? quoted.slice(0, -1) : quoted)}`, 'g');
}

/** The text of the event object around a match: from the previous "name" key to the next one. */
function objectAround(text: string, at: number, length: number): string {
  const before = text.lastIndexOf('"name"', at - 1);
  const after = text.indexOf('"name"', at + length);
  return text.slice(before < 0 ? 0 : before, after < 0 ? text.length : after);
}

function positionOf(text: string, offset: number): TextPosition {
  let line = 0;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, character: offset - lineStart };
}

/** The position of the event's "name" key, or undefined when no event of that name and category is written. */
export function eventPosition(text: string, e: EvidenceEvent): TextPosition | undefined {
  if (!e.name || e.name === '…') return undefined;
  const keys = nameKeys(e.name);
  const cat = new RegExp(`"cat"\\s*:\\s*${escaped(JSON.stringify(e.cat))}`);
  const correlation =
    e.correlation === undefined ? undefined : new RegExp(`"correlation"\\s*:\\s*${e.correlation}\\b`);
  let seen = 0;
  for (let m = keys.exec(text); m && seen < MAX_CANDIDATES; m = keys.exec(text), seen++) {
    const around = objectAround(text, m.index, m[0].length);
    if (e.cat && !cat.test(around)) continue;
    if (!correlation || correlation.test(around)) return positionOf(text, m.index);
  }
  return undefined;
}
