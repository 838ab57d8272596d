/**
 * Byte-level helpers for the streaming trace parser. They work on complete-or-truncated buffers: every scanner
 * returns INCOMPLETE (-1) when it runs off the end, and the caller retries once more bytes have arrived.
 */
import type { StringTable } from '../model/strings';

export const INCOMPLETE = -1;

export const enum Ch {
  Tab = 9,
  Lf = 10,
  Cr = 13,
  Space = 32,
  Quote = 34,
  Plus = 43,
  Comma = 44,
  Minus = 45,
  Dot = 46,
  Zero = 48,
  Nine = 57,
  Colon = 58,
  E = 69,
  LBracket = 91,
  Backslash = 92,
  RBracket = 93,
  LowerE = 101,
  LBrace = 123,
  RBrace = 125,
}

/** A syntax error at an absolute-in-buffer position; the parser turns it into an ImportError with the offset. */
export class SyntaxProblem extends Error {
  constructor(
    readonly position: number,
    readonly expected: string,
  ) {
    super(expected);
  }
}

export function skipWhitespace(buf: Uint8Array, p: number, end: number): number {
  while (p < end) {
    const c = buf[p];
    if (c !== Ch.Space && c !== Ch.Lf && c !== Ch.Cr && c !== Ch.Tab) return p;
    p++;
  }
  return p;
}

/** p at the opening quote; returns the index of the closing quote, or INCOMPLETE. */
export function scanString(buf: Uint8Array, p: number, end: number): number {
  p++;
  while (p < end) {
    const c = buf[p];
    if (c === Ch.Quote) return p;
    if (c === Ch.Backslash) p += 2;
    else p++;
  }
  return INCOMPLETE;
}

export function hasEscape(buf: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buf[i] === Ch.Backslash) return true;
  return false;
}

function isDelimiter(c: number): boolean {
  return (
    c === Ch.Comma ||
    c === Ch.RBrace ||
    c === Ch.RBracket ||
    c === Ch.Space ||
    c === Ch.Lf ||
    c === Ch.Cr ||
    c === Ch.Tab ||
    c === Ch.Colon
  );
}

/** A bare token (number, literal, or a non-JSON identifier such as N/A): returns its end. */
export function scanBareToken(buf: Uint8Array, p: number, end: number): number {
  while (p < end) {
    if (isDelimiter(buf[p])) return p;
    p++;
  }
  return INCOMPLETE;
}

const LITERALS = ['true', 'false', 'null'];

/** Whether bytes [start, end) are a JSON number or literal (the only bare values JSON allows). */
export function isJsonLiteral(buf: Uint8Array, start: number, end: number): boolean {
  const c = buf[start];
  if (c === Ch.Minus || (c >= Ch.Zero && c <= Ch.Nine)) {
    let i = start;
    if (buf[i] === Ch.Minus) i++;
    let digits = 0;
    while (i < end && buf[i] >= Ch.Zero && buf[i] <= Ch.Nine) {
      i++;
      digits++;
    }
    if (digits === 0) return false;
    if (i < end && buf[i] === Ch.Dot) {
      i++;
      let frac = 0;
      while (i < end && buf[i] >= Ch.Zero && buf[i] <= Ch.Nine) {
        i++;
        frac++;
      }
      if (frac === 0) return false;
    }
    if (i < end && (buf[i] === Ch.LowerE || buf[i] === Ch.E)) {
      i++;
      if (i < end && (buf[i] === Ch.Plus || buf[i] === Ch.Minus)) i++;
      let exp = 0;
      while (i < end && buf[i] >= Ch.Zero && buf[i] <= Ch.Nine) {
        i++;
        exp++;
      }
      if (exp === 0) return false;
    }
    return i === end;
  }
  const n = end - start;
  for (const literal of LITERALS) {
    if (literal.length !== n) continue;
    let same = true;
    for (let i = 0; i < n; i++) if (buf[start + i] !== literal.charCodeAt(i)) same = false;
    if (same) return true;
  }
  return false;
}

/** Called for each bare non-JSON value met while skipping (seed 000 §3.4); gets the key before it, if any. */
export type BareValueHandler = (
  keyStart: number,
  keyEnd: number,
  valueStart: number,
  valueEnd: number,
) => void;

/**
 * Skips one JSON value starting at p (after whitespace). Tolerant of bare identifiers as values inside objects,
 * which are reported to onBare. Returns the index after the value, or INCOMPLETE.
 */
export function skipValue(buf: Uint8Array, p: number, end: number, onBare?: BareValueHandler): number {
  const c = buf[p];
  if (c === Ch.Quote) {
    const q = scanString(buf, p, end);
    return q === INCOMPLETE ? INCOMPLETE : q + 1;
  }
  if (c !== Ch.LBrace && c !== Ch.LBracket) {
    const e = scanBareToken(buf, p, end);
    if (e === INCOMPLETE) return INCOMPLETE;
    if (e === p) throw new SyntaxProblem(p, 'a JSON value');
    if (!isJsonLiteral(buf, p, e)) {
      if (onBare) onBare(-1, -1, p, e);
      else throw new SyntaxProblem(p, 'a JSON value');
    }
    return e;
  }
  // Containers: track depth and the last key so a bare value can be named.
  let depth = 0;
  let keyStart = -1;
  let keyEnd = -1;
  let expectValue = false;
  while (p < end) {
    const ch = buf[p];
    if (ch === Ch.Quote) {
      const q = scanString(buf, p, end);
      if (q === INCOMPLETE) return INCOMPLETE;
      if (!expectValue) {
        keyStart = p + 1;
        keyEnd = q;
      }
      expectValue = false;
      p = q + 1;
      continue;
    }
    if (ch === Ch.LBrace || ch === Ch.LBracket) {
      depth++;
      expectValue = ch === Ch.LBracket;
      p++;
      continue;
    }
    if (ch === Ch.RBrace || ch === Ch.RBracket) {
      depth--;
      p++;
      expectValue = false;
      if (depth === 0) return p;
      continue;
    }
    if (ch === Ch.Colon) {
      expectValue = true;
      p++;
      continue;
    }
    if (ch === Ch.Comma) {
      // In arrays every element is a value; in objects a key comes next. Arrays of bare values are rare enough
      // that treating them as values is what matters.
      p++;
      continue;
    }
    if (ch === Ch.Space || ch === Ch.Lf || ch === Ch.Cr || ch === Ch.Tab) {
      p++;
      continue;
    }
    const e = scanBareToken(buf, p, end);
    if (e === INCOMPLETE) return INCOMPLETE;
    if (e === p) throw new SyntaxProblem(p, 'a JSON value');
    if (!isJsonLiteral(buf, p, e)) {
      if (onBare) onBare(keyStart, keyEnd, p, e);
      else throw new SyntaxProblem(p, 'a JSON value');
    }
    expectValue = false;
    p = e;
  }
  return INCOMPLETE;
}

/** A parsed timestamp: integer microseconds plus the sub-microsecond part in nanoseconds (exact for µs.nnn). */
export interface TimeValue {
  us: number;
  fracNs: number;
}

/**
 * Parses a number (bare or inside quotes, as Ascend writes timestamps) from [p, end) into integer µs and a
 * nanosecond fraction, so absolute epoch microseconds keep their nanoseconds. Returns false unless all of
 * [p, end) is a decimal number (hex, NaN, Infinity and trailing text are not).
 */
export function parseTime(buf: Uint8Array, p: number, end: number, out: TimeValue): boolean {
  let i = p;
  let negative = false;
  if (buf[i] === Ch.Minus) {
    negative = true;
    i++;
  }
  let intPart = 0;
  let digits = 0;
  while (i < end) {
    const c = buf[i];
    if (c < Ch.Zero || c > Ch.Nine) break;
    intPart = intPart * 10 + (c - Ch.Zero);
    i++;
    digits++;
  }
  let frac = 0;
  let scale = 1;
  if (i < end && buf[i] === Ch.Dot) {
    i++;
    while (i < end) {
      const c = buf[i];
      if (c < Ch.Zero || c > Ch.Nine) break;
      if (scale < 1e12) {
        frac = frac * 10 + (c - Ch.Zero);
        scale *= 10;
      }
      i++;
      digits++;
    }
  }
  if (digits === 0) return false;
  if (i < end && (buf[i] === Ch.LowerE || buf[i] === Ch.E)) {
    // Exponent notation: rare; exactness below the microsecond does not matter there.
    let text = '';
    for (let k = p; k < end; k++) text += String.fromCharCode(buf[k]);
    const value = Number(text); // all of it: "1e3x" is not a number
    if (!Number.isFinite(value)) return false;
    const whole = Math.floor(value);
    out.us = whole;
    out.fracNs = (value - whole) * 1000;
    return true;
  }
  // The whole token or nothing: "0x10" is not 0, and "12abc" is not 12.
  if (i !== end) return false;
  let fracNs = (frac / scale) * 1000;
  if (negative) {
    intPart = -intPart;
    if (fracNs > 0) {
      intPart -= 1;
      fracNs = 1000 - fracNs;
    }
  }
  out.us = intPart;
  out.fracNs = fracNs;
  return true;
}

/**
 * Interns byte strings into a StringTable without creating a JS string for every occurrence: a name repeated a
 * million times is hashed a million times but decoded once.
 */
export class ByteInterner {
  private slots = new Int32Array(1 << 12).fill(-1);
  private hashes: number[] = [];
  private starts: number[] = [];
  private lengths: number[] = [];
  private ids: number[] = [];
  private arena = new Uint8Array(1 << 16);
  private used = 0;

  constructor(private readonly strings: StringTable) {}

  /** [start, end) is the string's content between quotes (escapes decoded when present). */
  intern(buf: Uint8Array, start: number, end: number): number {
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i], 0x01000193);
    h >>>= 0;
    const mask = this.slots.length - 1;
    let slot = h & mask;
    const n = end - start;
    for (;;) {
      const entry = this.slots[slot];
      if (entry < 0) break;
      if (this.hashes[entry] === h && this.lengths[entry] === n) {
        const s = this.starts[entry];
        let same = true;
        for (let i = 0; i < n; i++) {
          if (this.arena[s + i] !== buf[start + i]) {
            same = false;
            break;
          }
        }
        if (same) return this.ids[entry];
      }
      slot = (slot + 1) & mask;
    }
    const id = this.strings.intern(decodeJsonString(buf, start, end));
    this.add(h, buf, start, end, id, slot);
    return id;
  }

  private add(h: number, buf: Uint8Array, start: number, end: number, id: number, slot: number): void {
    const n = end - start;
    if (this.used + n > this.arena.length) {
      let cap = this.arena.length * 2;
      while (cap < this.used + n) cap *= 2;
      const next = new Uint8Array(cap);
      next.set(this.arena.subarray(0, this.used));
      this.arena = next;
    }
    this.arena.set(buf.subarray(start, end), this.used);
    const entry = this.ids.length;
    this.hashes.push(h);
    this.starts.push(this.used);
    this.lengths.push(n);
    this.ids.push(id);
    this.used += n;
    this.slots[slot] = entry;
    if (this.ids.length * 2 > this.slots.length) this.rehash();
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = slots.length - 1;
    for (let entry = 0; entry < this.ids.length; entry++) {
      let slot = this.hashes[entry] & mask;
      while (slots[slot] >= 0) slot = (slot + 1) & mask;
      slots[slot] = entry;
    }
    this.slots = slots;
  }
}

const utf8 = new TextDecoder('utf-8');

/** Decodes a JSON string's content bytes (without quotes), resolving escapes. */
export function decodeJsonString(buf: Uint8Array, start: number, end: number): string {
  const text = utf8.decode(buf.subarray(start, end));
  if (!hasEscape(buf, start, end)) return text;
  try {
    return JSON.parse(`"${text}"`) as string;
  } catch {
    return text;
  }
}

export function decodeText(buf: Uint8Array, start: number, end: number): string {
  return utf8.decode(buf.subarray(start, end));
}

/** Where strict JSON text first goes wrong, for a message that can say "at byte N". */
export interface JsonProblem {
  offset: number;
  expected: string;
  /** The text ends inside a value: a file cut short. */
  truncated: boolean;
}

const enum Expect {
  Value,
  ValueOrClose,
  Key,
  KeyOrClose,
  Colon,
  After,
}

/**
 * Validates JSON syntax over bytes and returns the first problem, or undefined when the structure is sound
 * (string escapes are not checked). Only run once JSON.parse has failed: V8's messages do not always say where.
 */
export function findJsonProblem(buf: Uint8Array): JsonProblem | undefined {
  const end = buf.length;
  const closers: number[] = [];
  let mode = Expect.Value;
  let p = 0;
  const cut = (): JsonProblem => ({ offset: end, expected: 'more data', truncated: true });
  for (;;) {
    p = skipWhitespace(buf, p, end);
    if (p >= end) return mode === Expect.After && closers.length === 0 ? undefined : cut();
    const c = buf[p];
    if (mode === Expect.ValueOrClose || mode === Expect.KeyOrClose) {
      // Just after '[' or '{': the container may be empty.
      if (c === (mode === Expect.ValueOrClose ? Ch.RBracket : Ch.RBrace)) {
        closers.pop();
        p++;
        mode = Expect.After;
        continue;
      }
      mode = mode === Expect.ValueOrClose ? Expect.Value : Expect.Key;
    }
    switch (mode) {
      case Expect.Value: {
        if (c === Ch.LBrace || c === Ch.LBracket) {
          closers.push(c === Ch.LBrace ? Ch.RBrace : Ch.RBracket);
          mode = c === Ch.LBrace ? Expect.KeyOrClose : Expect.ValueOrClose;
          p++;
          continue;
        }
        if (c === Ch.Quote) {
          const q = scanString(buf, p, end);
          if (q === INCOMPLETE) return cut();
          p = q + 1;
        } else {
          const e = scanBareToken(buf, p, end);
          const tokenEnd = e === INCOMPLETE ? end : e;
          if (tokenEnd === p || !isJsonLiteral(buf, p, tokenEnd)) {
            if (e === INCOMPLETE) return cut();
            return { offset: p, expected: 'a JSON value', truncated: false };
          }
          p = tokenEnd;
        }
        mode = Expect.After;
        continue;
      }
      case Expect.Key: {
        if (c !== Ch.Quote) return { offset: p, expected: 'a quoted key', truncated: false };
        const q = scanString(buf, p, end);
        if (q === INCOMPLETE) return cut();
        p = q + 1;
        mode = Expect.Colon;
        continue;
      }
      case Expect.Colon:
        if (c !== Ch.Colon) return { offset: p, expected: "':' after a key", truncated: false };
        p++;
        mode = Expect.Value;
        continue;
      case Expect.After: {
        if (closers.length === 0) return { offset: p, expected: 'the end of the data', truncated: false };
        const closer = closers[closers.length - 1];
        if (c === Ch.Comma) {
          mode = closer === Ch.RBrace ? Expect.Key : Expect.Value;
          p++;
          continue;
        }
        if (c === closer) {
          closers.pop();
          p++;
          continue;
        }
        return {
          offset: p,
          expected: closer === Ch.RBrace ? "',' or '}'" : "',' or ']'",
          truncated: false,
        };
      }
    }
  }
}
