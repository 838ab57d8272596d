/** Where an evidence event is written in a real uncompressed trace (the Problems entry of a failing check). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureWindow } from '../../extension/analysis/checks';
import { TraceView } from '../../extension/analysis/checks/view';
import { eventPosition } from '../../extension/bringup/position';
import { importTrace } from '../../extension/import/kineto';
import { TRACES } from '../helpers/paths';

const NAME = 'kineto_tbplugin_gpu_metrics_input.json';

describe('eventPosition', () => {
  it('finds a kernel by its name, category and correlation id in the file as written', async () => {
    const file = path.join(TRACES, NAME);
    const text = readFileSync(file, 'utf8');
    const profile = await importTrace(file);
    const view = new TraceView(profile, captureWindow(profile));
    const kernels = view.eventsIn('kernel');
    // A kernel whose name repeats: only its correlation id tells it from the others.
    const names = kernels.map((i) => profile.nameOf(i));
    const repeated = kernels.find(
      (i, n) => names.indexOf(names[n]) !== n && view.correlation(i) !== undefined,
    )!;
    const e = view.evidence(repeated);
    const at = eventPosition(text, e)!;
    expect(at).toBeDefined();
    const lines = text.split('\n');
    expect(lines[at.line].slice(at.character)).toMatch(/^"name"/);
    expect(lines[at.line]).toContain(JSON.stringify(e.name).slice(1, 20));
    // The event object around the position carries that correlation id (and no other event's).
    const objectText = lines.slice(Math.max(0, at.line - 15), at.line + 15).join('\n');
    expect(objectText).toMatch(new RegExp(`"correlation"\\s*:\\s*${e.correlation}\\b`));
    const first = text.indexOf(`"name": ${JSON.stringify(e.name)}`);
    const offset = lines.slice(0, at.line).join('\n').length + 1 + at.character;
    expect(offset).toBeGreaterThan(first); // not simply the first event of that name
  });

  it('says nothing for an event the file does not hold', () => {
    const text = readFileSync(path.join(TRACES, NAME), 'utf8');
    expect(eventPosition(text, { cat: 'kernel', name: 'no_such_kernel', tsUs: 0, durUs: 0 })).toBeUndefined();
  });
});
