/**
 * A trace the importer cannot read. The message is one line: the file, the byte offset (in the decompressed
 * text, or in the compressed file for gzip errors) and what was expected there.
 */
export class ImportError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number | undefined,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}${offset === undefined ? '' : ` (at byte ${offset})`}`);
    this.name = 'ImportError';
  }
}
