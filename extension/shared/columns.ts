/**
 * Typed columns and the list of a slice's own columns: the Profile's slice table, the timeline encoder and the
 * payload's pack and unpack iterate this one list instead of spelling it out. Depends on nothing: the webview
 * bundles it too.
 */

/** The element type of a column. */
export type ColumnType = 'u8' | 'u16' | 'u32' | 'i32' | 'f64';

export interface ColumnArrayOf {
  u8: Uint8Array;
  u16: Uint16Array;
  u32: Uint32Array;
  i32: Int32Array;
  f64: Float64Array;
}

export type ColumnArray = ColumnArrayOf[ColumnType];

interface ColumnConstructor {
  new (length: number): ColumnArray;
  /** A view of `length` elements at `byteOffset` of `buffer`, without a copy. */
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): ColumnArray;
}

export const COLUMN_ARRAY: Readonly<Record<ColumnType, ColumnConstructor>> = {
  u8: Uint8Array,
  u16: Uint16Array,
  u32: Uint32Array,
  i32: Int32Array,
  f64: Float64Array,
};

/** Named columns and their element types, in their canonical order. */
export type ColumnSpec = Readonly<Record<string, ColumnType>>;

/** The arrays of a ColumnSpec (property docs carry over from the spec). */
export type ColumnsOf<S extends ColumnSpec> = { -readonly [K in keyof S]: ColumnArrayOf[S[K]] };

/** The column names of a spec, in its order. */
export function columnNames<S extends ColumnSpec>(spec: S): (keyof S & string)[] {
  return Object.keys(spec) as (keyof S & string)[];
}

/**
 * A slice's own columns, one entry per slice: what the Profile holds and the timeline payload carries as is.
 * Times are ns relative to the profile's origin.
 */
export const SLICE_COLUMNS = {
  /** SliceKind (shared/kinds.ts). */
  kind: 'u8',
  /** The track's id. */
  track: 'u32',
  /** Nesting level on the track, 0 at the top. */
  depth: 'u16',
  start: 'f64',
  dur: 'f64',
  /** Index into the string table. */
  name: 'u32',
  /** Index into the string table. */
  cat: 'u32',
  /** The vendor's correlation id; NaN when absent. */
  correlation: 'f64',
  /** torch's External id; NaN when absent (a torch External id of 0 is a real id). */
  externalId: 'f64',
  /** Index of the slice's args text, -1 when the event had none. */
  args: 'i32',
} as const satisfies ColumnSpec;

export type SliceColumnName = keyof typeof SLICE_COLUMNS;
export type SliceColumns = ColumnsOf<typeof SLICE_COLUMNS>;
export const SLICE_COLUMN_NAMES = columnNames(SLICE_COLUMNS);
