/**
 * The timeline in VS Code: one WebviewPanel per profile (restored after a reload by a serializer), and a
 * read-only custom editor for Kineto traces (*.pt.trace.json[.gz] by default, any .json[.gz] through
 * "Open With…"). The webview gets the profile as one packed ArrayBuffer (extension/protocol.ts) and keeps its
 * view in getState/setState, so nothing is retained while hidden.
 */
import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { webviewPageHtml } from './page';
import { analyzeOffThread } from '../analysis/offThread';
import type { Analysis } from '../analysis/types';
import { openWithProgress } from './openProgress';
import { readSessionFile, sessionOfFile } from '../capture/session';
import { UserError } from '../import/errors';
import type { ImportTimings } from '../import/kineto';
import {
  importOffThread,
  takeFirstFrame,
  warmImportWorker,
  type FirstFrameRequest,
} from '../timeline/readOffThread';
import type { Profile } from '../model/profile';
import {
  isWebviewToHost,
  type HostToWebview,
  type TimelineOpened,
  type TimelineViewState,
  type WebviewToHost,
} from '../protocol';
import { memoryBudgetProblem } from '../timeline/budget';
import { TimelineChannel } from '../timeline/channel';
import {
  compressTimelineBuffer,
  encodeAnalysisBuffer,
  encodeTimelineBuffer,
  type EncodeOptions,
} from '../timeline/encode';
import { TimelineRecords, type TimelineRecord } from '../timeline/restore';
import { timelineTitle } from '../timeline/title';

export const TIMELINE_VIEW_TYPE = 'flagos.timeline';
export const TRACE_EDITOR_VIEW_TYPE = 'flagos.traceViewer';
/** The same editor for any .json/.json.gz, offered only through "Open With…" (priority "option"). */
export const TRACE_EDITOR_ANY_VIEW_TYPE = 'flagos.traceViewer.anyJson';

export interface ShowTimelineOptions {
  /** A slice index of `profile` to select and reveal. */
  select?: number;
  /** What to re-open after a reload (a trace file or session folder); defaults to profile.path. */
  source?: string;
  viewColumn?: vscode.ViewColumn;
  /** A partial profile, shown while the rest is read: the status line saying so (header.partial). */
  partial?: string;
  /** When the user asked for it, and how long reading and analysing took (the first frame counts from then). */
  opened?: TimelineOpened;
}

function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, title: string): string {
  const dist = vscode.Uri.joinPath(extensionUri, 'dist');
  return webviewPageHtml(webview, {
    script: vscode.Uri.joinPath(dist, 'webview.js'),
    style: vscode.Uri.joinPath(dist, 'webview.css'),
    title,
  });
}

/**
 * The tab title for a source: `train.py · 18:02` for a session folder (or its own trace), from its session.json;
 * else the trace's file name.
 */
export function titleOf(source: string): string {
  try {
    const folder = existsSync(source) && statSync(source).isDirectory() ? source : sessionOfFile(source);
    return timelineTitle(source, folder ? readSessionFile(folder)?.document : undefined);
  } catch {
    return path.basename(source);
  }
}

/** A profile read for the timeline, with how long that took (the first frame's account). */
export interface ReadProfile {
  profile: Profile;
  readMs: number;
  /** Of readMs: in the addon's native parser (absent: the TypeScript parser read it). */
  parseMs?: number;
}

/** A profile read and analysed for the timeline, with how long each took. */
export interface Loaded extends ReadProfile {
  analysis: Analysis;
  analysisMs: number;
}

/** The host's account of an open that the user asked for at atMs (epoch ms), for the first frame's status line. */
export function openedAccount(atMs: number, loaded: ReadProfile & { analysisMs?: number }): TimelineOpened {
  const { readMs, analysisMs, parseMs } = loaded;
  return { atMs, readMs, analysisMs, parseMs };
}

/**
 * Imports (with the progress notification and Cancel) and analyses a trace, session or run folder, refusing up
 * front what cannot fit in memory; undefined when the user cancelled. A run of several parts hands its first part,
 * loaded likewise, to `onFirstPart` while the others are read. `onRead` gets the whole profile as soon as it is
 * read, before the analysis: the first frame needs only the slices (the analysis follows when the promise that
 * `onRead` returns settles: once that payload has left, so that the analysis does not hold it up).
 */
export async function loadForTimeline(
  source: string,
  label = path.basename(source),
  onFirstPart?: (first: Loaded, remaining: number) => void,
  onPartial?: (partial: Loaded, fraction: number) => void,
  onRead?: (read: ReadProfile) => PromiseLike<void> | void,
  firstFrame?: FirstFrameRequest,
): Promise<Loaded | undefined> {
  // The host's share and, in a desktop window, the page's.
  const problem = memoryBudgetProblem(source, { rendererHere: rendererIsLocal() });
  if (problem) throw new UserError(problem);
  const started = performance.now();
  warmImportWorker();
  const timings: ImportTimings = {};
  const readOf = (profile: Profile): ReadProfile => ({
    profile,
    readMs: performance.now() - started,
    parseMs: timings.parser === 'native' ? timings.nativeScanMs : undefined,
  });
  const analysed = async (read: ReadProfile): Promise<Loaded> => {
    const from = performance.now();
    const analysis = await analyzeOffThread(read.profile);
    return { ...read, analysis, analysisMs: performance.now() - from };
  };
  // The partial views are analysed while the import reads on; one that is ready after the whole was read is dropped.
  let wholeRead = false;
  const opened = await openWithProgress(source, label, {
    // Read on a worker: the host's own heap made each collection the import set off cost several times more.
    read: (file, options) => importOffThread(file, { ...options, firstFrame }),
    onFirstPart:
      onFirstPart &&
      ((first, remaining) =>
        void analysed(readOf(first.profile)).then(
          (loaded) => wholeRead || onFirstPart(loaded, remaining),
          () => undefined,
        )),
    // A single trace that reads slowly shows what is read so far (the import reads on meanwhile).
    onPartial:
      onPartial &&
      ((partial, fraction) =>
        void analysed(readOf(partial)).then(
          (loaded) => wholeRead || onPartial(loaded, fraction),
          () => undefined,
        )),
    timings,
  });
  wholeRead = true;
  if (!opened) return undefined;
  const read = readOf(opened.profile);
  // The slices are drawn before the analysis, which then only adds its columns and tables (a small second
  // message): the first frame no longer waits for linking, and the page draws while the host links.
  if (onRead) await onRead(read);
  return analysed(read);
}

/** The longest the analysis waits for the page to draw the profile read before it. */
const DRAWN_WAIT_MS = 3000;

/** The user cancelled a load (the notification's Cancel). */
class LoadCancelled extends UserError {}

async function loadProfile(
  source: string,
  onPartial?: (partial: Loaded, fraction: number) => void,
  onRead?: (read: ReadProfile) => PromiseLike<void>,
  firstFrame?: FirstFrameRequest,
): Promise<Loaded> {
  const loaded = await loadForTimeline(
    source,
    path.basename(source),
    undefined,
    onPartial,
    onRead,
    firstFrame,
  );
  if (!loaded) throw new LoadCancelled(`opening ${path.basename(source)} was cancelled`);
  return loaded;
}

function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0];
}

/** What a panel waiting for a load hears before it is done: the events read so far, the profile read whole. */
interface LoadListener {
  partial(partial: Loaded, fraction: number): void;
  /** Resolves once the panel has sent its first frame's payload. */
  read(read: ReadProfile): PromiseLike<void>;
}

/**
 * Profiles being loaded, by source: a panel restored while the same trace loads for another waits for that load,
 * and every panel waiting gets its partial profile and the profile read before its analysis (at once, for a panel
 * that joins after they came).
 */
interface SharedLoad {
  done: Promise<Loaded>;
  partial?: [Loaded, number];
  read?: ReadProfile;
  listeners: Set<LoadListener>;
}
const loading = new Map<string, SharedLoad>();

/**
 * `firstFrame`: the first frame's payload to encode beside the read, for the panel that starts it (a panel that
 * joins a load under way encodes its own).
 */
function loadShared(
  source: string,
  listener?: LoadListener,
  firstFrame?: FirstFrameRequest,
): Promise<Loaded> {
  const key = keyOf(source);
  let shared = loading.get(key);
  if (!shared) {
    const listeners = new Set<LoadListener>();
    // The callbacks run once reading has begun, after `entry` is set.
    const entry: SharedLoad = {
      listeners,
      done: loadProfile(
        source,
        (partial, fraction) => {
          entry.partial = [partial, fraction];
          for (const each of listeners) each.partial(partial, fraction);
        },
        async (read) => {
          entry.read = read;
          await Promise.all([...listeners].map((each) => each.read(read)));
        },
        firstFrame,
      ).finally(() => {
        if (loading.get(key) === entry) loading.delete(key);
      }),
    };
    loading.set(key, entry);
    shared = entry;
  }
  if (listener) {
    shared.listeners.add(listener);
    if (shared.read) void listener.read(shared.read);
    else if (shared.partial) listener.partial(...shared.partial);
  }
  return shared.done;
}

/** One webview showing one profile; owns its message handling and dies with the panel. */
class TimelinePanel {
  /** What the webview shows and when it can be told (kept for the webview that each show of the tab builds). */
  private readonly channel: TimelineChannel;
  private readonly disposables: vscode.Disposable[] = [];
  /** The profile shown, for the args the webview asks for (the payload leaves them out). */
  private profile: Profile | undefined;
  /** It shows a run's first part, whose whole run comes next. */
  wasPartial = false;

  constructor(
    readonly panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    public source: string,
    private readonly onDispose: (panel: TimelinePanel) => void,
    /** A panel VS Code restores through the serializer after a reload (a custom editor restores from its file). */
    private readonly restorable = false,
  ) {
    this.channel = new TimelineChannel((message) => this.panel.webview.postMessage(message));
    panel.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist')],
    };
    panel.webview.html = webviewHtml(panel.webview, extensionUri, titleOf(source));
    this.disposables.push(
      panel.webview.onDidReceiveMessage((message: unknown) => {
        if (isWebviewToHost(message)) void this.onMessage(message);
      }),
      // Without retainContextWhenHidden a hidden tab's webview is destroyed; the next one says 'ready'.
      panel.onDidChangeViewState(({ webviewPanel }) => {
        if (webviewPanel.visible) return;
        this.channel.webviewGone();
        // A hidden tab draws nothing: the analysis waiting for its first frame goes on now, not after DRAWN_WAIT_MS.
        for (const done of [...this.drawnWaiters]) done();
      }),
      panel.onDidDispose(() => this.dispose()),
    );
  }

  private post(message: HostToWebview): void {
    if (!this.channel.isDisposed) void this.panel.webview.postMessage(message);
  }

  show(
    profile: Profile,
    analysis: Analysis,
    options: Pick<ShowTimelineOptions, 'select' | 'partial' | 'opened'> = {},
  ): void {
    if (this.channel.isDisposed) return;
    const { select, partial } = options;
    // Shown now, for a profile already at hand: its first frame counts from here.
    const opened = options.opened ?? { atMs: Date.now() };
    this.channel.showProfile(this.encode(profile, analysis, partial, opened), select);
    this.remember(select);
  }

  showError(title: string, message: string): void {
    this.channel.showError(title, message);
  }

  private remember(select?: number): void {
    if (this.restorable) records?.remember(this.source, this.panel.title, select);
  }

  private encode(
    profile: Profile,
    analysis: Analysis | undefined,
    partial: string | undefined,
    opened: TimelineOpened,
  ): ArrayBuffer {
    this.profile = profile;
    return compressTimelineBuffer(
      encodeTimelineBuffer(profile, analysis, this.encodeOptions(partial, opened)),
    );
  }

  private encodeOptions(partial: string | undefined, opened: TimelineOpened): EncodeOptions {
    return {
      argsOnRequest: true,
      source: this.source,
      title: this.restorable ? this.panel.title : path.basename(this.source),
      partial,
      opened,
    };
  }

  /**
   * Loads `source` into this panel, with progress and, on failure, the importer's one-line error. Resolves false
   * when the load failed, or when the panel was closed or given other content meanwhile (then it shows nothing).
   */
  async load(source: string, select?: number): Promise<boolean> {
    if (this.channel.isDisposed) return false;
    this.source = source;
    this.panel.title = this.restorable ? titleOf(source) : path.basename(source);
    this.remember(select);
    const ticket = this.channel.beginLoad('Opening profile…', source);
    const atMs = Date.now();
    // The whole profile's first payload, encoded where it is read (its read time counted there).
    const firstFrame: FirstFrameRequest = {
      encode: this.encodeOptions(undefined, { atMs }),
      startedAtMs: atMs,
    };
    // A trace that reads slowly shows the events read so far, replaced by the whole once it is read.
    let early: { loaded: Loaded; read: string } | undefined;
    // The whole profile drawn before its analysis, which then follows as a message of its own.
    let drawnBeforeAnalysis: Profile | undefined;
    const listener: LoadListener = {
      partial: (partial, fraction) => {
        if (!this.channel.isCurrent(ticket)) return;
        early = { loaded: partial, read: `${Math.floor(fraction * 100)}% of the trace read` };
        const status = `${early.read} · the rest opening…`;
        void this.channel.showPartial(
          ticket,
          this.encode(partial.profile, partial.analysis, status, openedAccount(atMs, partial)),
        );
      },
      read: async (read) => {
        if (!this.channel.isCurrent(ticket)) return;
        drawnBeforeAnalysis = read.profile;
        // A visible panel's page, loaded or still loading, draws it and says so.
        const drawn = this.panel.visible ? this.nextDrawn() : undefined;
        const prepared = takeFirstFrame(read.profile, firstFrame);
        if (prepared) this.profile = read.profile;
        await this.channel.showPartial(
          ticket,
          prepared ?? this.encode(read.profile, undefined, undefined, openedAccount(atMs, read)),
        );
        // With two cores, linking beside the page's transfer and drawing slowed both: the analysis starts once the
        // frame is on screen, also for a page that was still loading when the trace was read (it gets the payload
        // when it says 'ready'; linking meanwhile took 60-130 ms from its first frame). A hidden tab draws nothing:
        // its analysis does not wait.
        if (drawn) await drawn;
      },
    };
    try {
      const loaded = await loadShared(source, listener, firstFrame);
      const { profile, analysis } = loaded;
      if (!this.channel.isCurrent(ticket)) return false;
      if (drawnBeforeAnalysis === profile)
        return this.channel.finishAnalysis(
          ticket,
          encodeAnalysisBuffer(profile, analysis, loaded.analysisMs),
          select,
        );
      const payload = this.encode(profile, analysis, undefined, openedAccount(atMs, loaded));
      return this.channel.finishLoad(ticket, payload, select);
    } catch (error) {
      // Cancelled after the partial profile was shown: it stays, saying what was not read.
      if (error instanceof LoadCancelled && early) {
        const status = `${early.read} · cancelled: the rest not read`;
        const opened = { atMs: Date.now() };
        this.channel.finishLoad(
          ticket,
          this.encode(early.loaded.profile, early.loaded.analysis, status, opened),
        );
        return false;
      }
      this.channel.failLoad(ticket, `Cannot show ${path.basename(source)}`, oneLine(error));
      return false;
    }
  }

  /** Those waiting for the page's next first frame (nextDrawn). */
  private readonly drawnWaiters = new Set<() => void>();

  /** Resolves when the page says its next first frame is drawn, or after DRAWN_WAIT_MS (a hidden tab draws none). */
  private nextDrawn(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.drawnWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, DRAWN_WAIT_MS);
      this.drawnWaiters.add(done);
    });
  }

  private async onMessage(message: WebviewToHost): Promise<void> {
    switch (message.type) {
      case 'ready':
        this.channel.webviewReady();
        break;
      case 'drawn':
        for (const done of [...this.drawnWaiters]) done();
        break;
      case 'openSource': {
        try {
          await openSourceAt(message.file, message.line, this.source, message.column);
          this.post({ type: 'reply', inReplyTo: message.requestId, ok: true });
        } catch (error) {
          const text = oneLine(error);
          this.post({ type: 'reply', inReplyTo: message.requestId, ok: false, error: text });
          void vscode.window.showWarningMessage(text);
        }
        break;
      }
      case 'log':
        if (message.level === 'error') void vscode.window.showErrorMessage(message.message);
        break;
      case 'args': {
        const profile = this.profile;
        if (!profile || message.slice >= profile.slices.length) break;
        const index = profile.slices.args[message.slice];
        this.post({ type: 'args', slice: message.slice, args: index < 0 ? '{}' : profile.args.text(index) });
        break;
      }
    }
  }

  dispose(): void {
    for (const done of [...this.drawnWaiters]) done();
    this.onDispose(this);
    for (const d of this.disposables.splice(0)) d.dispose();
    this.channel.dispose();
    if (this.restorable) records?.forget(this.source);
  }
}

/** Opens a source site: absolute paths as they are; relative ones against the workspace, then the trace's folder. */
async function openSourceAt(file: string, line: number, traceSource: string, column?: number): Promise<void> {
  const candidates: string[] = [];
  if (path.isAbsolute(file)) candidates.push(file);
  else {
    for (const folder of vscode.workspace.workspaceFolders ?? [])
      candidates.push(path.join(folder.uri.fsPath, file));
    const base =
      existsSync(traceSource) && statSync(traceSource).isDirectory()
        ? traceSource
        : path.dirname(traceSource);
    candidates.push(path.join(base, file));
  }
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found)
    throw new Error(
      `${file}:${line}: the source file is not on this machine (looked in ${candidates.join(', ')})`,
    );
  const position = new vscode.Position(
    Math.max(0, line - 1),
    column !== undefined ? Math.max(0, column - 1) : 0,
  );
  await vscode.window.showTextDocument(vscode.Uri.file(found), {
    selection: new vscode.Range(position, position),
    viewColumn: vscode.ViewColumn.One,
    preserveFocus: false,
  });
}

const panels = new Map<string, TimelinePanel>();
/** What each timeline showed, for a panel whose webview had not saved its source before a reload. */
let records: TimelineRecords | undefined;
const RECORDS_KEY = 'flagos.timeline.records';

function keyOf(source: string): string {
  return path.resolve(source);
}

function track(panel: TimelinePanel): void {
  panels.set(keyOf(panel.source), panel);
}

function untrack(panel: TimelinePanel): void {
  if (panels.get(keyOf(panel.source)) === panel) panels.delete(keyOf(panel.source));
}

function createPanel(
  context: vscode.ExtensionContext,
  source: string,
  viewColumn?: vscode.ViewColumn,
): TimelinePanel {
  const webviewPanel = vscode.window.createWebviewPanel(
    TIMELINE_VIEW_TYPE,
    titleOf(source),
    viewColumn ?? vscode.ViewColumn.Active,
    { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(context.extensionUri, 'dist')] },
  );
  const panel = new TimelinePanel(webviewPanel, context.extensionUri, source, untrack, true);
  track(panel);
  return panel;
}

/**
 * Shows a profile's timeline: reuses the panel already showing that trace, else opens one. `options.select`
 * selects and reveals a slice. The features that produce profiles (Open Trace, Profile Current File, hovers'
 * "Show in timeline") all come through here.
 */
export function showTimeline(
  context: vscode.ExtensionContext,
  profile: Profile,
  analysis: Analysis,
  options: ShowTimelineOptions = {},
): vscode.WebviewPanel {
  const source = options.source ?? profile.path;
  const existing = panels.get(keyOf(source));
  if (existing) {
    existing.show(profile, analysis, options);
    // The whole run replacing its first part stays where the user is: only a new profile brings the tab forward.
    if (!options.partial && !existing.wasPartial) existing.panel.reveal(options.viewColumn);
    existing.wasPartial = options.partial !== undefined;
    return existing.panel;
  }
  const panel = createPanel(context, source, options.viewColumn);
  panel.show(profile, analysis, options);
  panel.wasPartial = options.partial !== undefined;
  return panel.panel;
}

class TimelineSerializer implements vscode.WebviewPanelSerializer<TimelineViewState> {
  constructor(private readonly context: vscode.ExtensionContext) {}

  async deserializeWebviewPanel(
    webviewPanel: vscode.WebviewPanel,
    state: TimelineViewState | undefined,
  ): Promise<void> {
    const target = records?.restoreTarget(state, webviewPanel.title, (source) => panels.has(keyOf(source)));
    const panel = new TimelinePanel(
      webviewPanel,
      this.context.extensionUri,
      target?.source ?? 'profile',
      untrack,
      true,
    );
    if (!target) {
      panel.showError(
        'Cannot restore this timeline',
        'It was closed before its profile finished loading; open the trace again.',
      );
      return;
    }
    track(panel);
    await panel.load(target.source, target.select);
  }
}

class TraceDocument implements vscode.CustomDocument {
  constructor(readonly uri: vscode.Uri) {}
  dispose(): void {}
}

class TraceEditorProvider implements vscode.CustomReadonlyEditorProvider<TraceDocument> {
  constructor(private readonly context: vscode.ExtensionContext) {}

  openCustomDocument(uri: vscode.Uri): TraceDocument {
    return new TraceDocument(uri);
  }

  async resolveCustomEditor(document: TraceDocument, webviewPanel: vscode.WebviewPanel): Promise<void> {
    if (document.uri.scheme !== 'file') {
      const panel = new TimelinePanel(webviewPanel, this.context.extensionUri, document.uri.path, () => {});
      panel.showError(
        `Cannot show ${path.basename(document.uri.path)}`,
        `${document.uri.toString()}: only files on disk can be opened`,
      );
      return;
    }
    // Tracked like any timeline, so that Open Trace… or "Show in timeline" for this file reveals this tab
    // instead of opening the trace a second time (the last tab opened wins when there are several).
    const panel = new TimelinePanel(webviewPanel, this.context.extensionUri, document.uri.fsPath, untrack);
    track(panel);
    // Not awaited: VS Code shows the editor's webview once this resolves, so the page starts while the trace is
    // read, and can show its partial profile meanwhile (the load reports its own errors into the panel).
    void panel.load(document.uri.fsPath);
  }
}

export function registerTimeline(context: vscode.ExtensionContext): void {
  records = new TimelineRecords(
    {
      get: () => context.workspaceState.get<TimelineRecord[]>(RECORDS_KEY),
      set: (list) => void context.workspaceState.update(RECORDS_KEY, list),
    },
    keyOf,
  );
  const provider = new TraceEditorProvider(context);
  const editorOptions = {
    supportsMultipleEditorsPerDocument: true,
    webviewOptions: { enableFindWidget: false },
  };
  context.subscriptions.push(
    vscode.window.registerWebviewPanelSerializer(TIMELINE_VIEW_TYPE, new TimelineSerializer(context)),
    vscode.window.registerCustomEditorProvider(TRACE_EDITOR_VIEW_TYPE, provider, editorOptions),
    vscode.window.registerCustomEditorProvider(TRACE_EDITOR_ANY_VIEW_TYPE, provider, editorOptions),
  );
}

/** The webview's page runs on this machine (a desktop window, not a remote or browser one): its memory counts. */
export function rendererIsLocal(): boolean {
  return vscode.env.remoteName === undefined && vscode.env.uiKind === vscode.UIKind.Desktop;
}
