/**
 * Plain-text tables for the terminal: long names are cut in the middle so both ends stay readable, and every cell
 * is written with its control characters escaped (a name from a trace can hold terminal escape sequences).
 */
import { terminalText } from '../shared/text';

const MAX_CELL = 70;

function fit(cell: string): string {
  const text = terminalText(cell);
  if (text.length <= MAX_CELL) return text;
  const half = (MAX_CELL - 1) >> 1;
  return `${text.slice(0, half)}…${text.slice(text.length - half)}`;
}

export function formatTable(header: string[], rows: string[][]): string {
  const cells = [header, ...rows].map((row) => row.map(fit));
  const widths = header.map((_, c) => Math.max(...cells.map((row) => row[c].length)));
  const line = (row: string[]) =>
    row
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])))
      .join('  ')
      .trimEnd();
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join(
    '\n',
  );
}
