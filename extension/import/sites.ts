/**
 * sites.json: the capture agent's exact call sites, frames innermost first, by the torch External ids the trace
 * writes on its cpu_op / user_annotation events. A frame is {"file": absolute path, "line": 1-based, "function"}.
 *  - version 3 (written now): as version 2; a frame may also carry the expression's span — "column", "endLine",
 *    "endColumn": 1-based, columns in UTF-16 units (as editors and JavaScript strings count), endColumn just past
 *    the span's last character — and "kind" where it is not the exact line of the expression ('function': the
 *    function's def line, 'backward': autograd ops of the line that called backward()). A span or kind that does
 *    not validate is dropped with a warning; the frame stays.
 *  - version 2: {"version": 2, "chains": [[frame, ...], ...], "sites": [External id, chain index, ...]}
 *    — each chain once, a few bytes per op, so a long run's millions of ops stay readable;
 *  - version 1 (older agents): {"version": 1, "sites": {"<External id>": [frame, ...]}}.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { findJsonProblem } from './bytes';
import { ImportError, clip, quote } from './errors';
import type { ImportWarning, SourceFrame, SourceFrameKind } from '../model/profile';

/** A sites.json the product cannot use: one line naming the file and what was wrong. */
export class SitesError extends ImportError {
  constructor(file: string, problem: string) {
    super(file, undefined, problem);
    this.name = 'SitesError';
  }
}

/** A value from the file, for a message: short, whatever the file holds. */
function shown(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (value === null || typeof value !== 'object') return clip(String(value));
  return Array.isArray(value) ? 'an array' : 'an object';
}

const KINDS: ReadonlySet<string> = new Set<SourceFrameKind>(['function', 'backward', 'trace']);

/** Optional fields that did not validate, counted per field so one warning tells them all. */
class Dropped {
  readonly counts = new Map<string, { count: number; first: string }>();

  add(field: string, where: string, value: unknown): void {
    const seen = this.counts.get(field);
    if (seen) seen.count++;
    else this.counts.set(field, { count: 1, first: `${where}: ${shown(value)}` });
  }

  /** E.g. `"column" in 3 frames (first chains[0][1]: "x"); "kind" in 1 frame (first chains[2][0]: "inlined")`. */
  describe(): string {
    return [...this.counts]
      .map(
        ([field, { count, first }]) =>
          `"${field}" in ${count} frame${count === 1 ? '' : 's'} (first ${first})`,
      )
      .join('; ');
  }
}

const isPositive = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 1;

/** The span fields of a frame when they are whole and consistent; a broken span is dropped as one. */
function spanOf(
  record: Record<string, unknown>,
  line: number,
  where: string,
  dropped: Dropped,
): Partial<SourceFrame> {
  const { column, endLine, endColumn } = record;
  if (column === undefined && endLine === undefined && endColumn === undefined) return {};
  const whole =
    isPositive(column) &&
    isPositive(endLine) &&
    isPositive(endColumn) &&
    (endLine > line || (endLine === line && endColumn >= column));
  if (!whole) {
    const bad = !isPositive(column) ? 'column' : !isPositive(endLine) ? 'endLine' : 'endColumn';
    dropped.add(bad, where, record[bad]);
    return {};
  }
  return { column, endLine, endColumn };
}

function frameOf(value: unknown, source: string, where: string, dropped: Dropped): SourceFrame {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new SitesError(source, `${where}: expected a frame object {file, line, function}`);
  }
  const record = value as Record<string, unknown>;
  const { file, line, function: fn, kind } = record;
  if (typeof file !== 'string' || file === '')
    throw new SitesError(source, `${where}: "file" must be a non-empty string`);
  if (typeof line !== 'number' || !Number.isInteger(line) || line < 0) {
    throw new SitesError(source, `${where}: "line" must be a non-negative integer`);
  }
  if (typeof fn !== 'string') throw new SitesError(source, `${where}: "function" must be a string`);
  const frame: SourceFrame = { file, line, function: fn, ...spanOf(record, line, where, dropped) };
  if (kind !== undefined) {
    if (typeof kind === 'string' && KINDS.has(kind)) frame.kind = kind as SourceFrameKind;
    else dropped.add('kind', where, kind);
  }
  return frame;
}

/**
 * Validates parsed sites.json content; `source` names the file in error messages. Given `warnings`, optional frame
 * fields that do not validate are dropped with one warning there (without, they are dropped silently).
 */
export function parseSites(
  document: unknown,
  source: string,
  warnings?: ImportWarning[],
): Map<number, SourceFrame[]> {
  if (!document || typeof document !== 'object' || Array.isArray(document)) {
    throw new SitesError(source, `expected a JSON object {"version": 3, "chains": [...], "sites": [...]}`);
  }
  const { version, sites, chains } = document as Record<string, unknown>;
  const dropped = new Dropped();
  let result: Map<number, SourceFrame[]>;
  if (version === 2 || version === 3) result = parseSitesV2(chains, sites, source, dropped);
  else if (version === 1) result = parseSitesV1(sites, source, dropped);
  else throw new SitesError(source, `unsupported version ${shown(version)} (expected 1, 2 or 3)`);
  if (warnings && dropped.counts.size) {
    warnings.push({
      message: `${path.basename(source)} has fields that are not valid, ignored: ${dropped.describe()}`,
    });
  }
  return result;
}

function parseSitesV1(sites: unknown, source: string, dropped: Dropped): Map<number, SourceFrame[]> {
  if (!sites || typeof sites !== 'object' || Array.isArray(sites)) {
    throw new SitesError(source, `"sites" must be an object keyed by External id`);
  }
  const result = new Map<number, SourceFrame[]>();
  for (const [key, frames] of Object.entries(sites as Record<string, unknown>)) {
    const externalId = Number(key);
    if (key.trim() === '' || !Number.isInteger(externalId) || externalId < 0) {
      throw new SitesError(source, `site key ${quote(key)} is not an External id (a non-negative integer)`);
    }
    if (!Array.isArray(frames))
      throw new SitesError(source, `sites[${quote(key)}] must be an array of frames`);
    result.set(
      externalId,
      frames.map((frame, i) => frameOf(frame, source, `sites[${quote(key)}][${i}]`, dropped)),
    );
  }
  return result;
}

function parseSitesV2(
  chains: unknown,
  sites: unknown,
  source: string,
  dropped: Dropped,
): Map<number, SourceFrame[]> {
  if (!Array.isArray(chains)) throw new SitesError(source, `"chains" must be an array of frame arrays`);
  const parsed = chains.map((chain, c) => {
    if (!Array.isArray(chain)) throw new SitesError(source, `chains[${c}] must be an array of frames`);
    return chain.map((frame, i) => frameOf(frame, source, `chains[${c}][${i}]`, dropped));
  });
  if (!Array.isArray(sites) || sites.length % 2 !== 0) {
    throw new SitesError(source, `"sites" must be a flat array of External id, chain index pairs`);
  }
  const result = new Map<number, SourceFrame[]>();
  for (let k = 0; k < sites.length; k += 2) {
    const externalId = sites[k];
    const chain = sites[k + 1];
    if (!Number.isInteger(externalId) || (externalId as number) < 0) {
      throw new SitesError(source, `sites[${k}]: ${shown(externalId)} is not an External id`);
    }
    if (!Number.isInteger(chain) || (chain as number) < 0 || (chain as number) >= parsed.length) {
      throw new SitesError(source, `sites[${k + 1}]: ${shown(chain)} is not a chain index`);
    }
    // Ops under one caller share one frame array.
    result.set(externalId as number, parsed[chain as number]);
  }
  return result;
}

/**
 * Reads and validates a sites.json file. Throws SitesError with one line naming the file; given `warnings`, a
 * damaged or truncated file is a warning there instead and the result undefined, so the session still opens with
 * lines at function level (a run killed while writing sites.json loses its exact lines, not its profile).
 */
export async function readSites(file: string): Promise<Map<number, SourceFrame[]>>;
export async function readSites(
  file: string,
  warnings: ImportWarning[],
): Promise<Map<number, SourceFrame[]> | undefined>;
export async function readSites(
  file: string,
  warnings?: ImportWarning[],
): Promise<Map<number, SourceFrame[]> | undefined> {
  const outcome = await readSitesFile(file, warnings);
  if (!('problem' in outcome)) return outcome.sites;
  if (!warnings) throw new SitesError(file, outcome.problem);
  warnings.push({ message: `${path.basename(file)} ${outcome.damage}; lines are shown at function level` });
  return undefined;
}

/** The sites, or what is wrong: `problem` for the error, `damage` for the warning ("is damaged at byte N: ..."). */
async function readSitesFile(
  file: string,
  warnings: ImportWarning[] | undefined,
): Promise<{ sites: Map<number, SourceFrame[]> } | { problem: string; damage: string }> {
  let bytes: Buffer;
  let text: string;
  try {
    bytes = await readFile(file);
    text = bytes.toString('utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    return { problem: `cannot read (${code})`, damage: `cannot be read (${code})` };
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    const where = findJsonProblem(bytes);
    const damage = where
      ? `is damaged at byte ${where.offset}: ${where.truncated ? 'the file ends early (truncated)' : `expected ${where.expected}`}`
      : `is damaged: ${clip((error as Error).message)}`;
    return { problem: `not valid JSON (${damage.replace(/^is /, '')})`, damage };
  }
  try {
    // Optional fields are warned about only once the whole file is known to be readable.
    const dropped: ImportWarning[] = [];
    const sites = parseSites(document, file, dropped);
    warnings?.push(...dropped);
    return { sites };
  } catch (error) {
    if (!(error instanceof SitesError)) throw error;
    return { problem: error.problem, damage: `is damaged: ${error.problem}` };
  }
}
