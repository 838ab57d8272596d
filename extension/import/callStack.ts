/**
 * The `Call stack` arg of 2021-era traces (torch 1.8–1.11 with with_stack=True): the Python frames of the call
 * that ran an op, innermost first, as "a.py(611): __init__;b.py(312): step;train.py(54): <module>". Each line
 * number is the line being run, so the frames are exact call sites, as the capture agent's sites are.
 */
import type { ArgsArena, SourceFrame, SourceFrameKind } from '../model/profile';
import { decodeJsonString } from './bytes';
import { isUserFile } from './userCode';

/** One frame: "file(line): function" (a file name may itself hold parentheses, so the last "(N): " splits). */
const FRAME = /^(.*)\((\d+)\): (.*)$/;

/**
 * The user's own frames of a Call stack, innermost first, with kind 'trace'; [] when every frame is a library's
 * (or the stack is empty); undefined when a frame is not "file(line): function".
 */
export function parseCallStack(stack: string): SourceFrame[] | undefined {
  const frames: SourceFrame[] = [];
  for (const part of stack.split(';')) {
    if (part === '') continue; // a trailing ';'
    const match = FRAME.exec(part);
    if (!match) return undefined;
    const [, file, line, fn] = match;
    if (isUserFile(file)) frames.push({ file, line: Number(line), function: fn, kind: 'trace' });
  }
  return frames;
}

/** A stack's bytes, and its user frames (null: it does not parse). */
interface StackEntry {
  bytes: Buffer;
  chain: SourceFrame[] | null;
}

/**
 * What a stack's hash reads: its innermost frame and its outermost ones whole (where the stacks of one run differ
 * most: the op's own library line, the user's lines) and a sample of the rest. Equal hashes are told apart by
 * comparing the whole.
 */
const HASHED_HEAD = 160;
const HASHED_TAIL = 96;
const SAMPLED = 32;

/**
 * Call stacks by their bytes, each decoded and parsed once: a run's thousands of ops share a handful of stacks, and
 * the ops with the same user frames share one frame array (and its strings), so memory stays flat. Ops nested under one Python line carry
 * the stack of the op before them, which one native compare recognises; others pay a short hash and a compare.
 */
export class CallStackTable {
  private readonly byHash = new Map<number, StackEntry[]>();
  private readonly byFrames = new Map<string, SourceFrame[]>();
  private last: StackEntry | undefined;
  /**
   * Per noted op: args index, offset of the stack in those args (NO_STACK: none), its length, the op's External
   * id, 1 when its args hold a "Call site".
   */
  private refs: number[] = [];
  /** Ops whose stack did not parse, and the first such stack (for the warning). */
  malformed = 0;
  malformedExample = '';

  /** The user frames of the JSON string content buf[start, end); undefined when it has none or does not parse. */
  chainAt(buf: Uint8Array, start: number, end: number): SourceFrame[] | undefined {
    const n = end - start;
    let entry = this.last;
    // Buffer#compare over a range: no view is made per op.
    if (!entry || entry.bytes.length !== n || entry.bytes.compare(buf, start, end) !== 0) {
      let h = n;
      const head = Math.min(end, start + HASHED_HEAD);
      const tail = Math.max(head, end - HASHED_TAIL);
      for (let i = start; i < head; i++) h = Math.imul(h ^ buf[i], 0x01000193);
      const step = Math.max(1, Math.floor((tail - head) / SAMPLED));
      for (let i = head; i < tail; i += step) h = Math.imul(h ^ buf[i], 0x01000193);
      for (let i = tail; i < end; i++) h = Math.imul(h ^ buf[i], 0x01000193);
      let entries = this.byHash.get(h);
      entry = entries?.find((e) => e.bytes.length === n && e.bytes.compare(buf, start, end) === 0);
      if (!entry) {
        const chain = parseCallStack(decodeJsonString(buf, start, end));
        entry = { bytes: Buffer.from(buf.subarray(start, end)), chain: chain ? this.shared(chain) : null };
        if (!entries) this.byHash.set(h, (entries = []));
        entries.push(entry);
      }
      this.last = entry;
    }
    if (!entry.chain) {
      this.reject(entry.bytes.toString('utf8'));
      return undefined;
    }
    return entry.chain.length > 0 ? entry.chain : undefined;
  }

  /** One array for equal user frames: stacks that differ only in library frames share it. */
  private shared(chain: SourceFrame[]): SourceFrame[] {
    const key = chain.map((f) => `${f.file}\u0000${f.line}\u0000${f.function}`).join('\u0001');
    let found = this.byFrames.get(key);
    if (!found) this.byFrames.set(key, (found = chain));
    return found;
  }

  /**
   * A table with the ops noted so far, for a partial profile (ImportOptions.onPartial): resolving it leaves this
   * one's notes in place. The parsed stacks are shared: they are a cache of what bytes mean.
   */
  snapshot(): CallStackTable {
    const copy = new CallStackTable();
    for (const [hash, entries] of this.byHash) copy.byHash.set(hash, entries);
    for (const [key, frames] of this.byFrames) copy.byFrames.set(key, frames);
    copy.refs = this.refs.slice();
    copy.malformed = this.malformed;
    copy.malformedExample = this.malformedExample;
    return copy;
  }

  /** Counts an op's stack that cannot be read; `example` (the first one) goes in the warning. */
  reject(example: string): void {
    if (this.malformed++ === 0) this.malformedExample = example;
  }

  /**
   * Notes an op's stack: `offset` bytes into its stored args (args index `args`), `length` bytes of JSON string
   * content; offset -1 when the value is not a string.
   */
  note(args: number, offset: number, length: number, externalId: number, site = false): void {
    this.refs.push(args, offset, length, externalId, site ? 1 : 0);
  }

  /** The noted ops' sites by External id, read from the args arena they lie in. */
  resolve(arena: ArgsArena): Map<number, SourceFrame[]> {
    const sites = new Map<number, SourceFrame[]>();
    const { bytes, offsets } = arena.raw();
    const refs = this.refs;
    for (let k = 0; k < refs.length; k += REF) {
      const offset = refs[k + 1];
      let chain: SourceFrame[] | undefined;
      if (offset >= 0) {
        const start = offsets[refs[k]] + offset;
        chain = this.chainAt(bytes, start, start + refs[k + 2]);
      } else if (offset !== NO_STACK) {
        this.reject('a value that is not a string');
      }
      if (refs[k + 4] === 1) {
        const inner = exportedSite(arena.text(refs[k]));
        if (inner) chain = [inner, ...(chain ?? []).slice(1).map(exact)];
      }
      if (chain) sites.set(refs[k + 3], chain);
    }
    this.refs = [];
    return sites;
  }
}

/** Entries per noted op in CallStackTable's refs. */
const REF = 5;
/** A noted op with no "Call stack" (it has a "Call site"). */
export const NO_STACK = -3;

/** "file:line" or "file:line:column" (a file name may hold colons: the numbers are read from the right). */
const SITE = /^(.*?):(\d+)(?::(\d+))?$/;
const SPAN_END = /^(\d+):(\d+)$/;
const KINDS: ReadonlySet<string> = new Set<SourceFrameKind>(['function', 'backward']);

/**
 * The innermost frame this product's export wrote for an op ("Call site", "Call site end", "Call site kind",
 * "Call site function"; capture/export.ts): the expression's span and kind come back as they were captured,
 * which the Call stack's "file(line)" frames cannot carry. undefined when the args do not read as one.
 */
function exportedSite(argsText: string): SourceFrame | undefined {
  let args: Record<string, unknown>;
  try {
    args = JSON.parse(argsText) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const at = args['Call site'];
  const match = typeof at === 'string' ? SITE.exec(at) : null;
  if (!match) return undefined;
  const frame: SourceFrame = {
    file: match[1],
    line: Number(match[2]),
    function: typeof args['Call site function'] === 'string' ? args['Call site function'] : '',
  };
  if (match[3] !== undefined) frame.column = Number(match[3]);
  const end = typeof args['Call site end'] === 'string' ? SPAN_END.exec(args['Call site end']) : null;
  if (end) {
    frame.endLine = Number(end[1]);
    frame.endColumn = Number(end[2]);
  }
  const kind = args['Call site kind'];
  if (typeof kind === 'string' && KINDS.has(kind)) frame.kind = kind as SourceFrameKind;
  return frame;
}

/** An outer frame of an exported chain: the Call stack held exact lines (the export writes no other). */
function exact(frame: SourceFrame): SourceFrame {
  const { kind: _kind, ...rest } = frame;
  return rest;
}
