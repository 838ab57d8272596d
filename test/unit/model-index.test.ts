/** IdIndex (id -> index, dense where ids are small) and ArgsArena's bulk append, against plain references. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdIndex } from '../../extension/model/idIndex';
import { ArgsArena } from '../../extension/model/profile';

describe('IdIndex', () => {
  it('behaves as a Map with first-writer-wins for any ids: small, huge, negative, fractional', () => {
    const id = fc.oneof(
      fc.integer({ min: 0, max: 5000 }),
      fc.integer({ min: -5, max: 2 ** 33 }),
      fc.double({ min: -10, max: 10, noNaN: true }),
      fc.constantFrom(2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 0),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(id, fc.nat(1e6)), { maxLength: 300 }),
        fc.nat(2000),
        (entries, expected) => {
          const index = new IdIndex(expected);
          const reference = new Map<number, number>();
          for (const [key, value] of entries) {
            expect(index.setIfAbsent(key, value)).toBe(reference.get(key) ?? value);
            if (!reference.has(key)) reference.set(key, value);
          }
          for (const [key] of entries) expect(index.get(key)).toBe(reference.get(key));
          expect(index.get(123456.5)).toBe(reference.get(123456.5) ?? -1);
          expect(index.has(-7)).toBe(reference.has(-7));
        },
      ),
    );
  });

  it('set overwrites; ids never stored read as -1', () => {
    const index = new IdIndex(10);
    index.set(3, 30);
    index.set(3, 31);
    index.set(2 ** 40, 5);
    expect(index.get(3)).toBe(31);
    expect(index.get(4)).toBe(-1);
    expect(index.get(100_000)).toBe(-1);
    expect(index.get(2 ** 40)).toBe(5);
  });
});

describe('ArgsArena.appendBlock', () => {
  it('stores the same texts as appending them one by one', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 40 }), { maxLength: 60 }),
        fc.array(fc.string({ maxLength: 20 }), { maxLength: 5 }),
        fc.nat(60),
        fc.nat(60),
        (texts, before, a, b) => {
          const encoder = new TextEncoder();
          const parts = texts.map((t) => encoder.encode(t));
          const offsets = new Float64Array(parts.length + 1);
          for (let i = 0; i < parts.length; i++) offsets[i + 1] = offsets[i] + parts[i].length;
          const bytes = new Uint8Array(offsets[parts.length]);
          parts.forEach((p, i) => bytes.set(p, offsets[i]));
          const [from, to] = [Math.min(a, b, parts.length), Math.min(Math.max(a, b), parts.length)];

          const arena = new ArgsArena();
          for (const t of before) arena.appendText(t);
          const first = arena.appendBlock(bytes, offsets, from, to);
          expect(first).toBe(before.length);
          expect(arena.length).toBe(before.length + (to - from));
          for (let i = 0; i < before.length; i++) expect(arena.text(i)).toBe(before[i]);
          for (let i = from; i < to; i++) expect(arena.text(first + i - from)).toBe(texts[i]);
          arena.appendText('after');
          expect(arena.text(arena.length - 1)).toBe('after');
        },
      ),
    );
  });

  it('grows past its initial capacity in one block', () => {
    const n = 5000;
    const text = '{"grid": [1, 1, 1], "block": [128, 1, 1]}';
    const unit = new TextEncoder().encode(text);
    const bytes = new Uint8Array(unit.length * n);
    const offsets = new Float64Array(n + 1);
    for (let i = 0; i < n; i++) {
      bytes.set(unit, i * unit.length);
      offsets[i + 1] = (i + 1) * unit.length;
    }
    const arena = new ArgsArena();
    expect(arena.appendBlock(bytes, offsets, 0, n)).toBe(0);
    expect(arena.length).toBe(n);
    expect(arena.text(n - 1)).toBe(text);
    expect(arena.raw().bytes.length).toBe(bytes.length);
  });
});

describe('ArgsArena.useSharedMemory', () => {
  it('keeps every text, moved into shared memory, and grows there', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 40 }), { maxLength: 30 }),
        fc.array(fc.string({ maxLength: 4000 }), { maxLength: 30 }),
        (before, after) => {
          const arena = new ArgsArena();
          for (const t of before) arena.appendText(t);
          arena.useSharedMemory();
          expect(arena.isShared).toBe(true);
          for (const t of after) arena.appendText(t);
          const texts = [...before, ...after];
          expect(arena.length).toBe(texts.length);
          texts.forEach((t, i) => expect(arena.text(i)).toBe(t));
          const { bytes, offsets } = arena.buffers();
          expect(bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
          expect(offsets.buffer).toBeInstanceOf(SharedArrayBuffer);
        },
      ),
    );
  });
});
