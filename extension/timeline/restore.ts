/**
 * Which profile a timeline panel restored after a window reload shows.
 *
 * The webview saves the profile's source in its own state, but only once it has drawn the profile (and a moment
 * later): a tab hidden or a window reloaded before then comes back without it. So the host also remembers each
 * timeline it shows (source, tab title, the slice it asked to select) in the workspace's storage until the tab is
 * closed, and a panel restored without a source is matched to that record by its tab title. (A window reload does
 * not close the tabs it restores.)
 */
import type { TimelineViewState } from '../protocol';

export interface TimelineRecord {
  source: string;
  /** The panel's tab title, which VS Code restores with the panel. */
  title: string;
  /** The slice last asked to be selected. */
  select?: number;
}

/** Where the records persist (a Memento in VS Code). */
export interface TimelineRecordStore {
  get(): readonly TimelineRecord[] | undefined;
  set(records: readonly TimelineRecord[]): void;
}

export interface RestoreTarget {
  source: string;
  /** Set only when the webview's own state is lost: the selection to restore instead. */
  select?: number;
}

/** Newest first; older ones are dropped (a record only matters for a tab still open at a reload). */
export const MAX_TIMELINE_RECORDS = 32;

function isRecord(value: unknown): value is TimelineRecord {
  if (!value || typeof value !== 'object') return false;
  const r = value as Partial<TimelineRecord>;
  return (
    typeof r.source === 'string' &&
    typeof r.title === 'string' &&
    (r.select === undefined || typeof r.select === 'number')
  );
}

export class TimelineRecords {
  constructor(
    private readonly store: TimelineRecordStore,
    /** The identity of a source (the same trace through two spellings of its path is one record). */
    private readonly keyOf: (source: string) => string = (source) => source,
  ) {}

  /** The records, newest first (anything malformed in storage is ignored). */
  list(): TimelineRecord[] {
    const stored = this.store.get();
    return Array.isArray(stored) ? stored.filter(isRecord) : [];
  }

  /** Notes that a panel titled `title` shows `source`; `select` replaces the remembered selection when given. */
  remember(source: string, title: string, select?: number): void {
    const key = this.keyOf(source);
    const records = this.list();
    const previous = records.find((r) => this.keyOf(r.source) === key);
    const record: TimelineRecord = { source, title };
    const kept = select ?? (previous?.title === title ? previous.select : undefined);
    if (kept !== undefined) record.select = kept;
    const rest = records.filter((r) => this.keyOf(r.source) !== key);
    this.store.set([record, ...rest].slice(0, MAX_TIMELINE_RECORDS));
  }

  /** A panel was closed: a later panel restored without state must not take its profile. */
  forget(source: string): void {
    const key = this.keyOf(source);
    const records = this.list();
    const rest = records.filter((r) => this.keyOf(r.source) !== key);
    if (rest.length !== records.length) this.store.set(rest);
  }

  /**
   * What a restored panel shows: the source its webview saved; else the newest record under the panel's title
   * that no open panel shows (with the selection that record asked for); else nothing known.
   */
  restoreTarget(
    state: Partial<TimelineViewState> | undefined,
    title: string,
    isOpen: (source: string) => boolean = () => false,
  ): RestoreTarget | undefined {
    if (typeof state?.source === 'string' && state.source) return { source: state.source };
    const record = this.list().find((r) => r.title === title && !isOpen(r.source));
    if (!record) return undefined;
    return record.select === undefined
      ? { source: record.source }
      : { source: record.source, select: record.select };
  }
}
