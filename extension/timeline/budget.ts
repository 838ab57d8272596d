/**
 * Refusing a trace that cannot fit before reading it: half a gigabyte parsed and then an out-of-memory crash
 * loses the user's time and says nothing useful. The estimate is deliberately rough (the decompressed size
 * times what the importer keeps per byte), and errs on the side of trying.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import * as os from 'node:os';
import { formatBytes } from '../shared/format';

/** Bytes of memory the import and the timeline hold per byte of decompressed trace JSON (measured ~0.6-1.1). */
const BYTES_PER_TRACE_BYTE = 1.5;

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

/** undefined when the trace should fit; else one line for the user, naming the file and the sizes. */
export function memoryBudgetProblem(file: string, availableBytes = os.freemem()): string | undefined {
  const needed = estimateTraceBytes(file) * BYTES_PER_TRACE_BYTE;
  if (needed <= availableBytes) return undefined;
  return `${file}: too large for the memory available — opening it needs about ${formatBytes(needed)}, ${formatBytes(availableBytes)} is free`;
}
