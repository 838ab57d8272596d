import { describe, expect, it } from 'vitest';
import type { HostToWebview, TimelineViewState } from '../../extension/protocol';
import { TimelineChannel } from '../../extension/timeline/channel';
import {
  MAX_TIMELINE_RECORDS,
  TimelineRecords,
  type TimelineRecord,
  type TimelineRecordStore,
} from '../../extension/timeline/restore';
import { restoredView, viewState, type ViewSnapshot } from '../../webview/viewState';

/** A panel's webview as the host sees it: what reached it, and whether a webview is there to receive. */
class FakeWebview {
  readonly received: HostToWebview[] = [];
  /** Messages posted, received or not. */
  posted = 0;
  alive = false;
  readonly channel = new TimelineChannel((message) => {
    this.posted++;
    if (!this.alive) return Promise.resolve(false);
    if (message.type === 'init') {
      // Stamped with the host's clock when posted (the first frame's account): checked here, compared without.
      const { sentAtMs, ...rest } = message;
      expect(Math.abs((sentAtMs ?? 0) - Date.now())).toBeLessThan(5_000);
      this.received.push(rest);
    } else this.received.push(message);
    return Promise.resolve(true);
  });

  /** The webview (re)loads and says 'ready'. */
  load(): void {
    this.alive = true;
    this.channel.webviewReady();
  }

  /** Its tab is hidden: VS Code destroys the webview. */
  hide(): void {
    this.alive = false;
    this.channel.webviewGone();
  }

  types(): string[] {
    return this.received.map((m) => m.type);
  }
}

function memoryStore(): TimelineRecordStore & { saved: readonly TimelineRecord[] | undefined } {
  return {
    saved: undefined,
    get() {
      return this.saved;
    },
    set(records) {
      this.saved = structuredClone(records);
    },
  };
}

/** Resolves the next turn, after every settled post's `then`. */
const settled = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const payload = (bytes: number) => new ArrayBuffer(bytes);

describe('a timeline restored after a window reload', () => {
  it('shows its profile when the reload came before the webview saved its source', async () => {
    const storage = memoryStore();
    const source = '/sessions/20260101-train/trace.json.gz';

    // Before the reload: "Show in timeline" opens a panel with slice 7 selected, and the host records it.
    const before = new TimelineRecords(storage);
    const first = new FakeWebview();
    first.channel.showProfile(payload(8), 7);
    before.remember(source, 'trace.json.gz', 7);
    first.load();
    await settled();
    expect(first.received).toEqual([{ type: 'init', payload: payload(8), select: 7 }]);
    // The tab is hidden at once, before the webview's debounced setState ran: VS Code keeps no state for it.
    first.hide();
    first.channel.dispose(); // the window reloads

    // After the reload: a fresh host, the same workspace storage, a panel restored with no webview state.
    const after = new TimelineRecords(storage);
    const target = after.restoreTarget(undefined, 'trace.json.gz');
    expect(target).toEqual({ source, select: 7 });

    const restored = new FakeWebview();
    const ticket = restored.channel.beginLoad('Opening profile…', target!.source);
    restored.load(); // the webview says 'ready' before the profile is loaded
    await settled();
    expect(restored.types()).toEqual(['progress']);
    expect(restored.channel.finishLoad(ticket, payload(16), target!.select)).toBe(true);
    await settled();
    expect(restored.received.at(-1)).toEqual({ type: 'init', payload: payload(16), select: 7 });
    expect(restored.types()).not.toContain('error');
  });

  it('a load in flight when its panel is disposed and re-created fills the new panel only', async () => {
    const load = deferred<ArrayBuffer>();
    const old = new FakeWebview();
    old.load();
    const oldTicket = old.channel.beginLoad('Opening profile…', '/t.json');
    old.channel.dispose(); // the panel goes away while its profile loads
    const fresh = new FakeWebview();
    fresh.load();
    const freshTicket = fresh.channel.beginLoad('Opening profile…', '/t.json'); // waits for the same load
    load.resolve(payload(5));
    const data = await load.promise;
    expect(old.channel.finishLoad(oldTicket, data)).toBe(false);
    expect(fresh.channel.finishLoad(freshTicket, data)).toBe(true);
    await settled();
    expect(old.types()).toEqual(['progress']);
    expect(fresh.types()).toEqual(['progress', 'init']);
  });

  it('prefers the source the webview saved, keeping its own selection', () => {
    const records = new TimelineRecords(memoryStore());
    records.remember('/a/trace.json.gz', 'trace.json.gz', 3);
    expect(records.restoreTarget({ source: '/b/trace.json.gz', selected: 9 }, 'trace.json.gz')).toEqual({
      source: '/b/trace.json.gz',
    });
  });

  it('gives two restored tabs of the same title the two newest records, not the same one twice', () => {
    const records = new TimelineRecords(memoryStore());
    records.remember('/s1/trace.json.gz', 'trace.json.gz');
    records.remember('/other/bert.json', 'bert.json');
    records.remember('/s2/trace.json.gz', 'trace.json.gz', 4);
    const open = new Set<string>();
    const first = records.restoreTarget(undefined, 'trace.json.gz', (s) => open.has(s));
    open.add(first!.source);
    const second = records.restoreTarget(undefined, 'trace.json.gz', (s) => open.has(s));
    expect(first).toEqual({ source: '/s2/trace.json.gz', select: 4 });
    expect(second).toEqual({ source: '/s1/trace.json.gz' });
    open.add(second!.source);
    expect(records.restoreTarget(undefined, 'trace.json.gz', (s) => open.has(s))).toBeUndefined();
  });

  it('does not give a restored tab the profile of a tab closed since', () => {
    const records = new TimelineRecords(memoryStore());
    records.remember('/b/trace.json.gz', 'trace.json.gz', 2);
    records.remember('/a/trace.json.gz', 'trace.json.gz');
    records.forget('/a/trace.json.gz'); // closed by the user before the reload
    records.forget('/never/shown.json');
    expect(records.restoreTarget(undefined, 'trace.json.gz')).toEqual({
      source: '/b/trace.json.gz',
      select: 2,
    });
  });

  it('still says it cannot restore when nothing is known of the panel', () => {
    const records = new TimelineRecords(memoryStore());
    records.remember('/a/trace.json.gz', 'trace.json.gz');
    expect(records.restoreTarget(undefined, 'other.json')).toBeUndefined();
    expect(records.restoreTarget({ source: '' }, 'other.json')).toBeUndefined();
  });

  it('keeps one record per source, newest first, bounded, and survives malformed storage', () => {
    const store = memoryStore();
    const records = new TimelineRecords(store, (s) => s.replace(/\/\.\//g, '/'));
    records.remember('/a/x.json', 'x.json', 1);
    records.remember('/a/./x.json', 'x.json');
    expect(records.list()).toEqual([{ source: '/a/./x.json', title: 'x.json', select: 1 }]);
    for (let i = 0; i < MAX_TIMELINE_RECORDS + 5; i++) records.remember(`/t/${i}.json`, `${i}.json`);
    expect(records.list()).toHaveLength(MAX_TIMELINE_RECORDS);
    expect(records.list()[0].source).toBe(`/t/${MAX_TIMELINE_RECORDS + 4}.json`);
    store.saved = [
      { source: 3 },
      null,
      { source: '/ok.json', title: 'ok.json' },
    ] as unknown as TimelineRecord[];
    expect(records.list()).toEqual([{ source: '/ok.json', title: 'ok.json' }]);
  });
});

describe('TimelineChannel', () => {
  it('drops a load overtaken by a profile shown directly, without an error or a second init', async () => {
    const w = new FakeWebview();
    w.load();
    const ticket = w.channel.beginLoad('Opening profile…', '/t.json');
    w.channel.showProfile(payload(2), 5); // e.g. "Show in timeline" while the restore still loads
    expect(w.channel.isCurrent(ticket)).toBe(false);
    expect(w.channel.finishLoad(ticket, payload(1))).toBe(false);
    expect(w.channel.failLoad(ticket, 'Cannot show t.json', 'boom')).toBe(false);
    await settled();
    expect(w.received).toEqual([
      { type: 'progress', title: 'Opening profile…', message: '/t.json' },
      { type: 'init', payload: payload(2), select: 5 },
    ]);
  });

  it("shows a load's partial profile while it goes on, then the whole; a partial of an overtaken load is dropped", async () => {
    const w = new FakeWebview();
    w.load();
    const ticket = w.channel.beginLoad('Opening profile…', '/big.json');
    w.channel.showPartial(ticket, payload(4)); // the events read so far
    expect(w.channel.isCurrent(ticket)).toBe(true); // the load goes on
    expect(w.channel.finishLoad(ticket, payload(8))).toBe(true);
    await settled();
    expect(w.received).toEqual([
      { type: 'progress', title: 'Opening profile…', message: '/big.json' },
      { type: 'init', payload: payload(4) },
      { type: 'init', payload: payload(8) },
    ]);
    // A webview that comes back later gets the whole, not the partial.
    w.hide();
    w.load();
    await settled();
    expect(w.received.at(-1)).toEqual({ type: 'init', payload: payload(8) });
    // A partial that arrives after newer content took the panel shows nothing.
    const late = w.channel.beginLoad('Opening profile…', '/other.json');
    w.channel.showProfile(payload(2));
    w.channel.showPartial(late, payload(5));
    await settled();
    expect(w.received.at(-1)).toEqual({ type: 'init', payload: payload(2) });
  });

  it('sends the analysis of a profile drawn before it, and both to a webview that comes later, in order', async () => {
    const w = new FakeWebview();
    w.load();
    const ticket = w.channel.beginLoad('Opening profile…', '/t.json');
    expect(w.channel.isListening).toBe(true);
    await w.channel.showPartial(ticket, payload(6)); // resolves once the webview has it
    expect(w.received.at(-1)).toEqual({ type: 'init', payload: payload(6) });
    expect(w.channel.finishAnalysis(ticket, payload(2), 3)).toBe(true);
    await settled();
    expect(w.received.at(-1)).toEqual({ type: 'analysis', payload: payload(2), select: 3 });
    // The tab hidden and shown again: the profile, then its analysis; the selection was delivered already.
    w.hide();
    expect(w.channel.isListening).toBe(false);
    w.load();
    await settled();
    expect(w.received.slice(-2)).toEqual([
      { type: 'init', payload: payload(6) },
      { type: 'analysis', payload: payload(2) },
    ]);
    // An analysis of a load overtaken by newer content is dropped.
    const late = w.channel.beginLoad('Opening profile…', '/other.json');
    await w.channel.showPartial(late, payload(7));
    w.channel.showProfile(payload(9));
    expect(w.channel.finishAnalysis(late, payload(1))).toBe(false);
    await settled();
    expect(w.received.at(-1)).toEqual({ type: 'init', payload: payload(9) });
  });

  it('drops a load that finishes after the panel was closed', async () => {
    const w = new FakeWebview();
    w.load();
    const ticket = w.channel.beginLoad('Opening profile…', '/t.json');
    w.channel.dispose();
    expect(w.channel.finishLoad(ticket, payload(1))).toBe(false);
    expect(w.channel.failLoad(ticket, 'x', 'y')).toBe(false);
    w.channel.showError('x', 'y');
    w.channel.selectSlice(1);
    await settled();
    expect(w.types()).toEqual(['progress']);
  });

  it('holds everything until the webview is ready, then sends only the latest content', async () => {
    const w = new FakeWebview();
    const ticket = w.channel.beginLoad('Opening profile…', '/t.json');
    w.channel.selectSlice(4); // "Show in timeline" on a tab still loading
    w.channel.finishLoad(ticket, payload(3));
    await settled();
    expect(w.received).toEqual([]);
    w.load();
    await settled();
    expect(w.received).toEqual([{ type: 'init', payload: payload(3), select: 4 }]);
  });

  it('keeps a selection asked for while the tab was hidden and sends it to the next webview', async () => {
    const w = new FakeWebview();
    w.channel.showProfile(payload(3));
    w.load();
    await settled();
    w.hide();
    w.channel.selectSlice(11);
    w.load(); // the tab is revealed: a new webview
    await settled();
    expect(w.received.at(-1)).toEqual({ type: 'init', payload: payload(3), select: 11 });
    // Received once: a later webview restores the selection from its own state instead.
    w.hide();
    w.load();
    await settled();
    expect(w.received.at(-1)).toEqual({ type: 'init', payload: payload(3), select: undefined });
  });

  it('keeps a selection whose message found no webview (hidden before VS Code told the host)', async () => {
    const w = new FakeWebview();
    w.channel.showProfile(payload(3));
    w.load();
    await settled();
    w.alive = false; // destroyed, but the host has not heard yet
    w.channel.selectSlice(6);
    await settled();
    const posted = w.posted;
    w.channel.selectSlice(6); // known gone now: nothing posted into the void
    await settled();
    expect(w.posted).toBe(posted);
    w.load();
    await settled();
    expect(w.received.at(-1)).toEqual({ type: 'init', payload: payload(3), select: 6 });
  });

  it('selects at once in a webview that shows the profile', async () => {
    const w = new FakeWebview();
    w.channel.showProfile(payload(3));
    w.load();
    w.channel.selectSlice(2);
    await settled();
    expect(w.received.at(-1)).toEqual({ type: 'select', slice: 2 });
  });

  it('shows a failed load as its error, also to a webview that comes later', async () => {
    const w = new FakeWebview();
    const ticket = w.channel.beginLoad('Opening profile…', '/broken.json');
    expect(w.channel.failLoad(ticket, 'Cannot show broken.json', 'unexpected end')).toBe(true);
    w.load();
    await settled();
    expect(w.received).toEqual([
      { type: 'error', title: 'Cannot show broken.json', message: 'unexpected end' },
    ]);
  });

  it('keeps a profile on screen while it loads again', async () => {
    const w = new FakeWebview();
    w.channel.showProfile(payload(3));
    w.load();
    const ticket = w.channel.beginLoad('Opening profile…', '/t.json');
    w.hide();
    w.load();
    await settled();
    expect(w.types()).toEqual(['init', 'init']);
    expect(w.channel.finishLoad(ticket, payload(4))).toBe(true);
    await settled();
    expect(w.received.at(-1)).toEqual({ type: 'init', payload: payload(4), select: undefined });
  });

  it('does not mark a newer webview gone when a send to an older one fails late', async () => {
    const posts: { message: HostToWebview; answer: (ok: boolean) => void }[] = [];
    const channel = new TimelineChannel(
      (message) => new Promise<boolean>((answer) => posts.push({ message, answer })),
    );
    channel.showProfile(payload(1));
    channel.webviewReady(); // webview 1
    channel.webviewReady(); // webview 2 (webview 1 went away before its init arrived)
    posts[0].answer(false);
    posts[1].answer(true);
    await settled();
    channel.selectSlice(9);
    expect(posts.at(-1)?.message).toEqual({ type: 'select', slice: 9 });
  });
});

describe("the webview's own state across a window reload", () => {
  const source = '/sessions/20260101-train';
  const shown: ViewSnapshot = {
    source,
    viewStartNs: 1_000,
    viewEndNs: 9_000,
    scrollTop: 40,
    selected: 12,
    tab: 2,
    profilerFramesShown: true,
    pinned: [7, 3],
    allFlows: false,
  };
  /** VS Code keeps webview state as JSON. */
  const reloaded = (state: unknown): unknown => JSON.parse(JSON.stringify(state));

  it('brings back the profiler frames shown, with the view and the selection, for the panel it restores', () => {
    const saved = reloaded(viewState(shown));
    const target = new TimelineRecords(memoryStore()).restoreTarget(
      saved as Partial<TimelineViewState>,
      'train',
    );
    expect(target).toEqual({ source });
    expect(restoredView(saved, target!.source, 100)).toEqual({
      profilerFramesShown: true,
      allFlows: false,
      pinned: [3, 7],
      view: { startNs: 1_000, endNs: 9_000, scrollTop: 40 },
      selected: 12,
      tab: 2,
    });
  });

  it('hides them by default, and when they were hidden', () => {
    expect(restoredView(undefined, source, 100).profilerFramesShown).toBe(false);
    const hidden = reloaded(viewState({ ...shown, profilerFramesShown: false }));
    expect(hidden).not.toHaveProperty('profilerFrames');
    expect(restoredView(hidden, source, 100).profilerFramesShown).toBe(false);
  });

  it('keeps the toggles for another profile in the panel, but not its view, selection or pins', () => {
    const withFlows = reloaded(viewState({ ...shown, allFlows: true }));
    expect(restoredView(withFlows, '/other/trace.json', 100)).toEqual({
      profilerFramesShown: true,
      allFlows: true,
      pinned: [],
    });
  });

  it('keeps pinned tracks only as whole track ids', () => {
    const saved = { source, pinned: [2, -1, 1.5, '4', 9] };
    expect(restoredView(saved, source, 100).pinned).toEqual([2, 9]);
    expect(reloaded(viewState({ ...shown, pinned: [] }))).not.toHaveProperty('pinned');
  });

  it('ignores what does not fit: a selection past the slices, fields of the wrong type', () => {
    expect(restoredView(reloaded(viewState(shown)), source, 10).selected).toBeUndefined();
    const junk = { source, profilerFrames: 'yes', viewStartNs: '1', viewEndNs: 2, selected: 1.5, tab: -1 };
    const nothing = { profilerFramesShown: false, allFlows: false, pinned: [] };
    expect(restoredView(junk, source, 100)).toEqual(nothing);
    expect(restoredView('a string', source, 100)).toEqual(nothing);
  });
});
