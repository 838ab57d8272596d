/**
 * Refusing a trace that cannot fit before reading it: half a gigabyte parsed and then an out-of-memory crash
 * loses the user's time and says nothing useful. The estimate is the decompressed size times what each process
 * was measured to hold per byte of trace JSON at its peak (VmHWM above the process's own start, on the real traces
 * here: the 56 MB owlv2, 87 MB MTIA, 35 MB ResNet-50 and 34 MB vLLM traces), the largest of them, so that a trace
 * refused is one that would not have fitted.
 */
import { closeSync, openSync, readSync, readdirSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { formatBytes } from '../shared/format';

/**
 * Bytes the process that imports a trace holds at its peak per byte of decompressed trace JSON: the extension host
 * or the command line, with the model, its analysis and the timeline's payload (1.7 on the 56 MB and 87 MB traces,
 * 2.7 on a 35 MB one whose collector's slack weighs more).
 */
export const HOST_BYTES_PER_TRACE_BYTE = 2.7;
/** The page that shows the timeline (the webview's renderer, a report's tab): 1.75 on the 87 MB trace, 2.8 on the
 * 56 MB owlv2 with its 117,635 slices. */
export const RENDERER_BYTES_PER_TRACE_BYTE = 2.8;

/** Decompressed size: a gzip file's ISIZE trailer (size mod 2^32), never less than 4x the compressed size. */
export function estimateTraceBytes(file: string): number {
  const size = statSync(file).size;
  if (!/\.gz$/i.test(file) || size < 18) return size;
  const fd = openSync(file, 'r');
  try {
    const trailer = Buffer.alloc(4);
    readSync(fd, trailer, 0, 4, size - 4);
    return Math.max(trailer.readUInt32LE(0), size * 4);
  } finally {
    closeSync(fd);
  }
}

/** A session's own files beside its trace, which are not traces. */
const SIDE_FILE = /^(session|sites(\.\d+)?|progress)\.json$/i;
const TRACE_FILE = /\.json(\.gz)?$/i;

/**
 * The decompressed bytes a target opens: a trace file; a session folder with its parts (ranks/, procs/, as deep
 * as they go); a folder of rank traces. Unreadable entries count nothing: opening them says what is wrong.
 */
export function estimateOpenBytes(target: string, depth = 0): number {
  let stat;
  try {
    stat = statSync(target);
  } catch {
    return 0;
  }
  if (stat.isFile()) return TRACE_FILE.test(target) ? estimateTraceBytes(target) : 0;
  if (!stat.isDirectory() || depth > 4) return 0;
  let total = 0;
  let names: string[] = [];
  try {
    names = readdirSync(target);
  } catch {
    return 0;
  }
  for (const name of names) {
    const entry = path.join(target, name);
    let kind;
    try {
      kind = statSync(entry);
    } catch {
      continue; // gone meanwhile
    }
    if (kind.isFile() && TRACE_FILE.test(name) && !SIDE_FILE.test(name)) total += estimateTraceBytes(entry);
    // A session's parts: ranks/<RANK>/ and procs/<pid>/, each a session with parts of its own.
    else if (kind.isDirectory() && (name === 'ranks' || name === 'procs' || depth > 0))
      total += estimateOpenBytes(entry, depth + 1);
  }
  return total;
}

export interface BudgetOptions {
  /** Free memory, bytes; os.freemem() (MemAvailable) by default. */
  availableBytes?: number;
  /** The page that shows it runs on this machine too (a local VS Code window): its memory counts as well. */
  rendererHere?: boolean;
}

/** undefined when the target should fit; else one line for the user, naming it and the sizes. */
export function memoryBudgetProblem(
  target: string,
  options: BudgetOptions | number = {},
): string | undefined {
  const { availableBytes = os.freemem(), rendererHere = false } =
    typeof options === 'number' ? { availableBytes: options } : options;
  const bytes = estimateOpenBytes(target);
  const needed = bytes * (HOST_BYTES_PER_TRACE_BYTE + (rendererHere ? RENDERER_BYTES_PER_TRACE_BYTE : 0));
  if (needed <= availableBytes) return undefined;
  return `${target}: too large for the memory available — opening it needs about ${formatBytes(needed)}, ${formatBytes(availableBytes)} is free`;
}
