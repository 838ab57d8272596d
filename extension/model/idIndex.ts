/**
 * Id -> slice (or flow) index, first writer wins by default. Correlation ids, External ids and interned flow ids
 * are mostly small non-negative integers numbered from 0 or 1, so a typed array indexed by id holds them; ids that
 * are not (negative, fractional, or far beyond the count expected) go to a Map. Over millions of ids the array is
 * several times faster than a Map alone, whose keys read from Float64Array columns are boxed doubles.
 */
export class IdIndex {
  private dense: Int32Array;
  private readonly sparse = new Map<number, number>();
  private readonly limit: number;

  /** `expected`: about how many ids there will be, or the largest id expected; ids up to a few times that are
   * kept densely (the array grows as ids arrive). */
  constructor(expected: number) {
    this.limit = Math.max(1024, 4 * expected + 1024);
    this.dense = new Int32Array(1024).fill(-1);
  }

  /** The index stored for `id`, or -1. */
  get(id: number): number {
    if (id >= 0 && id < this.dense.length && (id | 0) === id) return this.dense[id];
    if (id >= 0 && id < this.limit && (id | 0) === id) return -1;
    return this.sparse.get(id) ?? -1;
  }

  has(id: number): boolean {
    return this.get(id) >= 0;
  }

  /** Stores `value` (>= 0) for `id`. */
  set(id: number, value: number): void {
    if (id >= 0 && id < this.limit && (id | 0) === id) {
      if (id >= this.dense.length) this.grow(id);
      this.dense[id] = value;
      return;
    }
    this.sparse.set(id, value);
  }

  /** Stores `value` for `id` unless an id is already there; returns what is stored. */
  setIfAbsent(id: number, value: number): number {
    const prior = this.get(id);
    if (prior >= 0) return prior;
    this.set(id, value);
    return value;
  }

  private grow(id: number): void {
    let size = this.dense.length * 2;
    while (size <= id) size *= 2;
    const next = new Int32Array(Math.min(size, this.limit)).fill(-1);
    next.set(this.dense);
    this.dense = next;
  }
}
