/** The real traces of ../shared/traces (third-party data, used in place) and their MANIFEST facts. */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';

import { ROOT, TRACES } from './paths';

export { ROOT, TRACES };

/** Trace paths relative to the project root, as a user would type them. */
export function realTraces(): string[] {
  const out: string[] = [];
  for (const name of readdirSync(TRACES).sort()) {
    const full = path.join(TRACES, name);
    if (statSync(full).isDirectory()) {
      for (const inner of readdirSync(full).sort()) out.push(path.relative(ROOT, path.join(full, inner)));
    } else if (!name.endsWith('.md')) {
      out.push(path.relative(ROOT, full));
    }
  }
  return out;
}

export function tracePath(name: string): string {
  const p = path.relative(ROOT, path.join(TRACES, name));
  if (!existsSync(path.join(ROOT, p))) throw new Error(`missing trace ${name}`);
  return p;
}

/**
 * A trace's events as the file holds them, read without the importer (what a test checks the importer against):
 * gzip or not, an object with traceEvents or a bare array. `name` is a file of ../shared/traces, or a path.
 */
export function rawTraceEvents<T = Record<string, unknown>>(name: string): T[] {
  const file = path.isAbsolute(name) ? name : path.join(TRACES, name);
  const bytes = readFileSync(file);
  const text = (bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes).toString('utf8');
  const doc = JSON.parse(text) as { traceEvents?: T[] } | T[];
  return Array.isArray(doc) ? doc : (doc.traceEvents ?? []);
}

export interface ManifestFacts {
  events: number;
  ph: Record<string, number>;
}

/** "Events: 1,348; ph: X: 838, f: 315, s: 155, M: 38, i: 2" per file, from MANIFEST.md. */
export function manifestFacts(): Map<string, ManifestFacts> {
  const text = readFileSync(path.join(TRACES, 'MANIFEST.md'), 'utf8');
  const facts = new Map<string, ManifestFacts>();
  let current = '';
  for (const line of text.split('\n')) {
    const heading = /^## (.+)$/.exec(line);
    if (heading) current = heading[1].trim();
    const events = /^- Events: ([\d,]+); ph: (.*)$/.exec(line);
    if (events && current) {
      const ph: Record<string, number> = {};
      for (const part of events[2].split(',')) {
        const m = /^\s*(\w): (\d+)/.exec(part);
        if (m) ph[m[1]] = Number(m[2]);
      }
      facts.set(current, { events: Number(events[1].replace(/,/g, '')), ph });
    }
  }
  return facts;
}
