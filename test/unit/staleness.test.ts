import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  applyTextChanges,
  createLineShiftMap,
  DocumentLines,
  currentLine,
  markUnmappable,
  profiledLines,
  lineDiffChange,
  type TextChange,
} from '../../extension/analysis/lineIndex';

const at = (line: number, character = 0) => ({ line, character });
function change(
  start: { line: number; character: number },
  end: { line: number; character: number },
  text: string,
  headBlank?: boolean,
): TextChange {
  return {
    startLine: start.line,
    startCharacter: start.character,
    endLine: end.line,
    endCharacter: end.character,
    text,
    headBlank,
  };
}

describe('line shift map', () => {
  it('keeps lines in place for edits inside a line', () => {
    const map = createLineShiftMap(10, [3]);
    const next = applyTextChanges(map, [change(at(3, 4), at(3, 9), 'torch.mm')]);
    expect(next).toBe(map);
    expect(currentLine(next, 3)).toBe(3);
  });

  it('moves lines down when lines are inserted above and up when deleted above', () => {
    let map = createLineShiftMap(10, [5]);
    map = applyTextChanges(map, [change(at(2), at(2), 'a = 1\nb = 2\n')]);
    expect(currentLine(map, 5)).toBe(7);
    expect(currentLine(map, 1)).toBe(1);
    expect(currentLine(map, 2)).toBe(4); // the line the text was typed in front of moves too
    map = applyTextChanges(map, [change(at(0), at(3), '')]);
    expect(currentLine(map, 5)).toBe(4);
    expect(currentLine(map, 0)).toBe(-1);
    expect(currentLine(map, 1)).toBe(-1);
    expect(map.unmappable).toBeUndefined();
  });

  it('follows Enter at the end of a line, at its start, and after its indentation', () => {
    const map = createLineShiftMap(6, [2]);
    expect(currentLine(applyTextChanges(map, [change(at(2, 12), at(2, 12), '\n    ')]), 2)).toBe(2);
    expect(currentLine(applyTextChanges(map, [change(at(2, 0), at(2, 0), '\n')]), 2)).toBe(3);
    expect(currentLine(applyTextChanges(map, [change(at(2, 4), at(2, 4), '\n    ', true)]), 2)).toBe(3);
    expect(currentLine(applyTextChanges(map, [change(at(2, 4), at(2, 4), '\n    ', false)]), 2)).toBe(2);
  });

  it('deletes a removed line and joins a line onto the one above', () => {
    let map = createLineShiftMap(6, [2, 3]);
    map = applyTextChanges(map, [change(at(2), at(3), '')]); // delete line 2 entirely
    expect(currentLine(map, 2)).toBe(-1);
    expect(currentLine(map, 3)).toBe(2);
    expect(currentLine(map, 5)).toBe(4);
    map = applyTextChanges(map, [change(at(1, 8), at(2, 0), '')]); // join profiled line 3 onto line 1
    expect(currentLine(map, 1)).toBe(1);
    expect(currentLine(map, 3)).toBe(1);
    // The inverse keeps the first profiled line where two were joined.
    expect(profiledLines(map, 4)[1]).toBe(1);
  });

  it('applies several changes of one event (multi-cursor) bottom-up', () => {
    const map = applyTextChanges(createLineShiftMap(10, [8]), [
      change(at(1), at(1), '# a\n'),
      change(at(6), at(6), '# b\n'),
    ]);
    expect(currentLine(map, 0)).toBe(0);
    expect(currentLine(map, 1)).toBe(2);
    expect(currentLine(map, 5)).toBe(6);
    expect(currentLine(map, 6)).toBe(8);
    expect(currentLine(map, 8)).toBe(10);
  });

  it('cannot map a block of profiled lines replaced by other lines', () => {
    const map = createLineShiftMap(10, [4]);
    const next = applyTextChanges(map, [change(at(3), at(6), 'x = 1\ny = 2\nz = 3\n')]);
    expect(next.unmappable).toMatch(/replaced/);
    expect(currentLine(next, 4)).toBe(-1);
    expect(currentLine(next, 0)).toBe(-1);
    // Further edits do not revive a map that lost track.
    expect(applyTextChanges(next, [change(at(0), at(0), '\n')])).toBe(next);
  });

  it('maps a block replaced away from profiled lines', () => {
    const map = createLineShiftMap(10, [8]);
    const next = applyTextChanges(map, [change(at(3), at(6), 'x = 1\n')]);
    expect(next.unmappable).toBeUndefined();
    expect(currentLine(next, 8)).toBe(6);
  });

  it('cannot map a whole-document replacement', () => {
    const map = createLineShiftMap(4, []);
    const next = applyTextChanges(map, [change(at(0), at(3, 5), 'new\ncontent\n')], 4);
    expect(next.unmappable).toMatch(/whole file/);
  });

  it('marks a map unmappable on request and answers -1 then', () => {
    const map = markUnmappable(createLineShiftMap(3, [1]), 'the file is newer than the profile');
    expect(map.unmappable).toBe('the file is newer than the profile');
    expect(currentLine(map, 1)).toBe(-1);
    expect([...profiledLines(map, 3)]).toEqual([-1, -1, -1]);
  });

  it('builds the inverse for O(1) hover lookups', () => {
    const map = applyTextChanges(createLineShiftMap(5, []), [change(at(1), at(1), 'new\n')]);
    expect([...profiledLines(map, 6)]).toEqual([0, -1, 1, 2, 3, 4]);
  });
});

// A document of uniquely named lines; random inserts, deletes and in-line edits applied both to the text and,
// as VS Code would report them, to the map. Every line still present must be found where it now is.
type Op =
  | { kind: 'insert'; at: number; count: number }
  | { kind: 'delete'; from: number; count: number }
  | { kind: 'edit'; at: number }
  | { kind: 'enterAfter'; at: number };

describe('line shift map against a simulated document', () => {
  it('tracks every surviving line through random edits', () => {
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        kind: fc.constant('insert' as const),
        at: fc.nat(60),
        count: fc.integer({ min: 1, max: 4 }),
      }),
      fc.record({
        kind: fc.constant('delete' as const),
        from: fc.nat(60),
        count: fc.integer({ min: 1, max: 4 }),
      }),
      fc.record({ kind: fc.constant('edit' as const), at: fc.nat(60) }),
      fc.record({ kind: fc.constant('enterAfter' as const), at: fc.nat(60) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(opArb, { maxLength: 25 }), (lineCount, ops) => {
        let doc = Array.from({ length: lineCount }, (_, i) => `line${i}`);
        let fresh = 0;
        // Untracked lines: block replacements never make the map unmappable here.
        let map = createLineShiftMap(lineCount, []);
        for (const op of ops) {
          if (op.kind === 'insert') {
            const at = Math.min(op.at, doc.length - 1);
            const added = Array.from({ length: op.count }, () => `new${fresh++}`);
            map = applyTextChanges(map, [
              change(
                { line: at, character: 0 },
                { line: at, character: 0 },
                added.map((l) => l + '\n').join(''),
              ),
            ]);
            doc = [...doc.slice(0, at), ...added, ...doc.slice(at)];
          } else if (op.kind === 'delete') {
            if (doc.length <= 1) continue;
            const from = Math.min(op.from, doc.length - 2);
            const to = Math.min(from + op.count, doc.length - 1);
            map = applyTextChanges(map, [
              change({ line: from, character: 0 }, { line: to, character: 0 }, ''),
            ]);
            doc = [...doc.slice(0, from), ...doc.slice(to)];
          } else if (op.kind === 'edit') {
            const at = Math.min(op.at, doc.length - 1);
            map = applyTextChanges(map, [
              change({ line: at, character: 1 }, { line: at, character: 2 }, 'X'),
            ]);
          } else {
            const at = Math.min(op.at, doc.length - 1);
            const len = doc[at].length;
            map = applyTextChanges(map, [
              change({ line: at, character: len }, { line: at, character: len }, '\n'),
            ]);
            doc = [...doc.slice(0, at + 1), `new${fresh++}`, ...doc.slice(at + 1)];
          }
        }
        if (map.unmappable) return false;
        for (let o = 0; o < lineCount; o++) {
          const where = doc.indexOf(`line${o}`);
          if (currentLine(map, o) !== where) return false;
        }
        const inverse = profiledLines(map, doc.length);
        return doc.every((text, c) =>
          text.startsWith('line') ? inverse[c] === Number(text.slice(4)) : inverse[c] === -1,
        );
      }),
      { numRuns: 300 },
    );
  });
});

describe('lineDiffChange', () => {
  it('finds the replaced block between the shared top and bottom lines', () => {
    const before = 'a\nb\nc\nd\n';
    expect(lineDiffChange(before, before)).toBeUndefined();
    const inserted = lineDiffChange(before, 'a\nb\nNEW\nc\nd\n')!;
    expect(inserted).toMatchObject({ startLine: 2, endLine: 2, text: 'NEW\n' });
    let map = applyTextChanges(createLineShiftMap(5, [3]), [inserted]);
    expect(currentLine(map, 3)).toBe(4);
    const deleted = lineDiffChange(before, 'a\nd\n')!;
    map = applyTextChanges(createLineShiftMap(5, [3]), [deleted]);
    expect([currentLine(map, 1), currentLine(map, 3)]).toEqual([-1, 1]);
    const replaced = lineDiffChange(before, 'a\nX\nY\nd\n')!;
    expect(applyTextChanges(createLineShiftMap(5, [1]), [replaced]).unmappable).toBeDefined();
    const lastLine = lineDiffChange('a\nb', 'a\nc')!;
    expect(lastLine).toMatchObject({ startLine: 1, endLine: 1, endCharacter: 1, text: 'c' });
  });
});

describe('DocumentLines', () => {
  const profiled = 'a\nb\nc\nd\n';
  const rewritten = 'a\nX\nY\nZ\nd\n';
  const lines = (text: string) => text.split('\n').length;
  /** The edit a reload from disk makes (VS Code replaces the block between the shared top and bottom lines). */
  const reload = (before: string, after: string) => [lineDiffChange(before, after)!];
  /** Line 3 (0-based 2) carries profile data; the document is first seen holding `text`. */
  const seen = (text: string, diskText: string, diskNewer: boolean) =>
    new DocumentLines({ tracked: [2], minLines: 3, text, lineCount: lines(text), diskText, diskNewer });

  it('an undo or revert back to the profiled text makes every line match again', () => {
    const doc = seen(profiled, profiled, false);
    expect(doc.apply(reload(profiled, rewritten), () => rewritten, lines(rewritten))).toBe(true);
    expect(doc.map.unmappable).toBeDefined();
    expect(doc.apply(reload(rewritten, profiled), () => profiled, lines(profiled))).toBe(true);
    expect(doc.map.unmappable).toBeUndefined();
    expect(currentLine(doc.map, 2)).toBe(2);
  });

  it('a file saved after the profile stays stale when the document is reloaded to what is on disk', () => {
    // First seen while the editor still held older text and the disk had been rewritten (a checkout): the disk
    // text is not what was profiled, so the reload that follows must not count as a return to it.
    const doc = seen(profiled, rewritten, true);
    expect(doc.map.unmappable).toBe('the file was saved after the profile was taken');
    doc.apply(reload(profiled, rewritten), () => rewritten, lines(rewritten));
    expect(doc.map.unmappable).toBe('the file was saved after the profile was taken');
  });

  it('maps unsaved edits made while the profile ran from the disk text to the open text', () => {
    const open = 'a\nNEW\nb\nc\nd\n';
    const doc = seen(open, profiled, false);
    expect(doc.map.unmappable).toBeUndefined();
    expect(currentLine(doc.map, 2)).toBe(3);
  });
});
