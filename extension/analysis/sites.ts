/**
 * sites.json: the capture agent's exact call sites, frames innermost first, each {"file": absolute path, "line":
 * 1-based, "function": name}, by the torch External ids the trace writes on its cpu_op / user_annotation events.
 *  - version 2 (written now): {"version": 2, "chains": [[frame, ...], ...], "sites": [External id, chain index, ...]}
 *    — each chain once, a few bytes per op, so a long run's millions of ops stay readable;
 *  - version 1 (older agents): {"version": 1, "sites": {"<External id>": [frame, ...]}}.
 */
import { readFile } from 'node:fs/promises';
import { ImportError } from '../import/errors';
import type { SourceFrame } from '../model/profile';

/** A sites.json the product cannot use: one line naming the file and what was wrong. */
export class SitesError extends ImportError {
  constructor(file: string, problem: string) {
    super(file, undefined, problem);
    this.name = 'SitesError';
  }
}

function frameOf(value: unknown, source: string, where: string): SourceFrame {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new SitesError(source, `${where}: expected a frame object {file, line, function}`);
  }
  const { file, line, function: fn } = value as Record<string, unknown>;
  if (typeof file !== 'string' || file === '')
    throw new SitesError(source, `${where}: "file" must be a non-empty string`);
  if (typeof line !== 'number' || !Number.isInteger(line) || line < 0) {
    throw new SitesError(source, `${where}: "line" must be a non-negative integer`);
  }
  if (typeof fn !== 'string') throw new SitesError(source, `${where}: "function" must be a string`);
  return { file, line, function: fn };
}

/** Validates parsed sites.json content; `source` names the file in error messages. */
export function parseSites(document: unknown, source: string): Map<number, SourceFrame[]> {
  if (!document || typeof document !== 'object' || Array.isArray(document)) {
    throw new SitesError(source, `expected a JSON object {"version": 1, "sites": {...}}`);
  }
  const { version, sites, chains } = document as Record<string, unknown>;
  if (version === 2) return parseSitesV2(chains, sites, source);
  if (version !== 1)
    throw new SitesError(source, `unsupported version ${JSON.stringify(version)} (expected 1 or 2)`);
  if (!sites || typeof sites !== 'object' || Array.isArray(sites)) {
    throw new SitesError(source, `"sites" must be an object keyed by External id`);
  }
  const result = new Map<number, SourceFrame[]>();
  for (const [key, frames] of Object.entries(sites as Record<string, unknown>)) {
    const externalId = Number(key);
    if (key.trim() === '' || !Number.isInteger(externalId) || externalId < 0) {
      throw new SitesError(
        source,
        `site key ${JSON.stringify(key)} is not an External id (a non-negative integer)`,
      );
    }
    if (!Array.isArray(frames)) throw new SitesError(source, `sites["${key}"] must be an array of frames`);
    result.set(
      externalId,
      frames.map((frame, i) => frameOf(frame, source, `sites["${key}"][${i}]`)),
    );
  }
  return result;
}

function parseSitesV2(chains: unknown, sites: unknown, source: string): Map<number, SourceFrame[]> {
  if (!Array.isArray(chains)) throw new SitesError(source, `"chains" must be an array of frame arrays`);
  const parsed = chains.map((chain, c) => {
    if (!Array.isArray(chain)) throw new SitesError(source, `chains[${c}] must be an array of frames`);
    return chain.map((frame, i) => frameOf(frame, source, `chains[${c}][${i}]`));
  });
  if (!Array.isArray(sites) || sites.length % 2 !== 0) {
    throw new SitesError(source, `"sites" must be a flat array of External id, chain index pairs`);
  }
  const result = new Map<number, SourceFrame[]>();
  for (let k = 0; k < sites.length; k += 2) {
    const externalId = sites[k];
    const chain = sites[k + 1];
    if (!Number.isInteger(externalId) || (externalId as number) < 0) {
      throw new SitesError(source, `sites[${k}]: ${JSON.stringify(externalId)} is not an External id`);
    }
    if (!Number.isInteger(chain) || (chain as number) < 0 || (chain as number) >= parsed.length) {
      throw new SitesError(source, `sites[${k + 1}]: ${JSON.stringify(chain)} is not a chain index`);
    }
    // Ops under one caller share one frame array.
    result.set(externalId as number, parsed[chain as number]);
  }
  return result;
}

/** Reads and validates a sites.json file. Throws SitesError with one line naming the file. */
export async function readSites(file: string): Promise<Map<number, SourceFrame[]>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new SitesError(file, `cannot read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new SitesError(file, `not valid JSON (${(error as Error).message})`);
  }
  return parseSites(document, file);
}
