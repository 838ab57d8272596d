/**
 * Interned strings: every name, category and file path is stored once and referred to by a small integer,
 * so slices stay columnar and a million kernels with the same name cost one string.
 */
export class StringTable {
  private readonly ids = new Map<string, number>();
  private readonly values: string[] = [];

  constructor() {
    this.intern(''); // id 0 is always the empty string
  }

  intern(value: string): number {
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.values.length;
      this.values.push(value);
      this.ids.set(value, id);
    }
    return id;
  }

  /** A table of these strings under their indices as ids (values[0] must be the empty string). */
  static of(values: readonly string[]): StringTable {
    const table = new StringTable();
    for (let id = 1; id < values.length; id++) table.values.push(values[id]);
    for (let id = 1; id < values.length; id++) if (!table.ids.has(values[id])) table.ids.set(values[id], id);
    return table;
  }

  /** A table with the same strings under the same ids. */
  copy(): StringTable {
    const copy = new StringTable();
    for (let id = 1; id < this.values.length; id++) copy.intern(this.values[id]);
    return copy;
  }

  /** The id of a string already interned, or -1. */
  find(value: string): number {
    return this.ids.get(value) ?? -1;
  }

  get(id: number): string {
    return this.values[id] ?? '';
  }

  get size(): number {
    return this.values.length;
  }

  all(): readonly string[] {
    return this.values;
  }
}
