/**
 * The timeline in VS Code: one WebviewPanel per profile (restored after a reload by a serializer), and a
 * read-only custom editor for Kineto traces (*.pt.trace.json[.gz] by default, any .json[.gz] through
 * "Open With…"). The webview gets the profile as one packed ArrayBuffer (extension/protocol.ts) and keeps its
 * view in getState/setState, so nothing is retained while hidden.
 */
import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { analyze } from '../analysis/analyze';
import type { Analysis } from '../analysis/types';
import { loadProfileArgument } from '../cli/summary';
import type { Profile } from '../model/profile';
import { isWebviewToHost, type HostToWebview, type TimelineViewState, type WebviewToHost } from '../protocol';
import { memoryBudgetProblem } from '../timeline/budget';
import { encodeTimelineBuffer } from '../timeline/encode';

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
}

function nonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let text = '';
  for (let i = 0; i < 32; i++) text += chars.charAt(Math.floor(Math.random() * chars.length));
  return text;
}

function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, title: string): string {
  const dist = vscode.Uri.joinPath(extensionUri, 'dist');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js'));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css'));
  const scriptNonce = nonce();
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
    `style-src ${webview.cspSource}`,
    `script-src 'nonce-${scriptNonce}'`,
  ].join('; ');
  const escaped = title.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${style}">
<title>${escaped}</title>
</head>
<body>
<script nonce="${scriptNonce}" src="${script}"></script>
</body>
</html>`;
}

/** Imports and analyses a trace or session folder; refuses up front what cannot fit in memory. */
async function loadProfile(source: string): Promise<{ profile: Profile; analysis: Analysis }> {
  if (existsSync(source) && statSync(source).isFile()) {
    const problem = memoryBudgetProblem(source);
    if (problem) throw new Error(problem);
  }
  const profile = await loadProfileArgument(source);
  return { profile, analysis: analyze(profile) };
}

function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0];
}

/** One webview showing one profile; owns its message handling and dies with the panel. */
class TimelinePanel {
  private payload: ArrayBuffer | undefined;
  private select: number | undefined;
  private ready = false;
  private pendingError: { title: string; message: string } | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    readonly panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    public source: string,
    private readonly onDispose: (panel: TimelinePanel) => void,
  ) {
    panel.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist')],
    };
    panel.webview.html = webviewHtml(panel.webview, extensionUri, path.basename(source));
    this.disposables.push(
      panel.webview.onDidReceiveMessage((message: unknown) => {
        if (isWebviewToHost(message)) void this.onMessage(message);
      }),
      panel.onDidDispose(() => this.dispose()),
    );
  }

  private post(message: HostToWebview): void {
    void this.panel.webview.postMessage(message);
  }

  show(profile: Profile, analysis: Analysis, select?: number): void {
    this.payload = encodeTimelineBuffer(profile, analysis, {
      source: this.source,
      title: path.basename(this.source),
    });
    this.select = select;
    this.pendingError = undefined;
    if (this.ready) {
      this.post({ type: 'init', payload: this.payload, select });
      this.select = undefined;
    }
  }

  showError(title: string, message: string): void {
    this.pendingError = { title, message };
    if (this.ready) this.post({ type: 'error', title, message });
  }

  progress(title: string, message: string): void {
    if (this.ready) this.post({ type: 'progress', title, message });
  }

  selectSlice(slice: number): void {
    this.select = slice;
    if (this.ready) this.post({ type: 'select', slice });
  }

  /** Loads `source` into this panel, with progress and, on failure, the importer's one-line error. */
  async load(source: string, select?: number): Promise<boolean> {
    this.source = source;
    this.panel.title = path.basename(source);
    this.progress('Opening profile…', source);
    try {
      const { profile, analysis } = await loadProfile(source);
      this.show(profile, analysis, select);
      return true;
    } catch (error) {
      this.showError(`Cannot show ${path.basename(source)}`, oneLine(error));
      return false;
    }
  }

  private async onMessage(message: WebviewToHost): Promise<void> {
    switch (message.type) {
      case 'ready':
        // A webview (re)loaded: everything it should show is sent again.
        this.ready = true;
        if (this.pendingError) this.post({ type: 'error', ...this.pendingError });
        else if (this.payload) {
          this.post({ type: 'init', payload: this.payload, select: this.select });
          // Once shown, the selection lives in the webview's own state; a later reload restores that instead.
          this.select = undefined;
        }
        break;
      case 'openSource': {
        try {
          await openSourceAt(message.file, message.line, this.source);
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
    }
  }

  dispose(): void {
    this.onDispose(this);
    for (const d of this.disposables.splice(0)) d.dispose();
    this.payload = undefined;
  }
}

/** Opens a source site: absolute paths as they are; relative ones against the workspace, then the trace's folder. */
async function openSourceAt(file: string, line: number, traceSource: string): Promise<void> {
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
  const position = new vscode.Position(Math.max(0, line - 1), 0);
  await vscode.window.showTextDocument(vscode.Uri.file(found), {
    selection: new vscode.Range(position, position),
    viewColumn: vscode.ViewColumn.One,
    preserveFocus: false,
  });
}

const panels = new Map<string, TimelinePanel>();

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
    path.basename(source),
    viewColumn ?? vscode.ViewColumn.Active,
    { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(context.extensionUri, 'dist')] },
  );
  const panel = new TimelinePanel(webviewPanel, context.extensionUri, source, untrack);
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
    existing.show(profile, analysis, options.select);
    existing.panel.reveal(options.viewColumn);
    return existing.panel;
  }
  const panel = createPanel(context, source, options.viewColumn);
  panel.show(profile, analysis, options.select);
  return panel.panel;
}

class TimelineSerializer implements vscode.WebviewPanelSerializer<TimelineViewState> {
  constructor(private readonly context: vscode.ExtensionContext) {}

  async deserializeWebviewPanel(
    webviewPanel: vscode.WebviewPanel,
    state: TimelineViewState | undefined,
  ): Promise<void> {
    const source = state?.source;
    const panel = new TimelinePanel(webviewPanel, this.context.extensionUri, source ?? 'profile', untrack);
    if (!source) {
      panel.showError(
        'Cannot restore this timeline',
        'It was closed before its profile finished loading; open the trace again.',
      );
      return;
    }
    track(panel);
    await panel.load(source);
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
    await panel.load(document.uri.fsPath);
  }
}

interface ShowInTimelineArgs {
  profilePath: string;
  slices?: number[];
}

export function registerTimeline(context: vscode.ExtensionContext): void {
  const provider = new TraceEditorProvider(context);
  const editorOptions = {
    supportsMultipleEditorsPerDocument: true,
    webviewOptions: { enableFindWidget: false },
  };
  context.subscriptions.push(
    vscode.window.registerWebviewPanelSerializer(TIMELINE_VIEW_TYPE, new TimelineSerializer(context)),
    vscode.window.registerCustomEditorProvider(TRACE_EDITOR_VIEW_TYPE, provider, editorOptions),
    vscode.window.registerCustomEditorProvider(TRACE_EDITOR_ANY_VIEW_TYPE, provider, editorOptions),
    vscode.commands.registerCommand('flagos.showInTimeline', async (args: ShowInTimelineArgs) => {
      if (!args?.profilePath) return;
      const slice = args.slices?.[0];
      const existing = panels.get(keyOf(args.profilePath));
      if (existing) {
        existing.panel.reveal();
        if (slice !== undefined) existing.selectSlice(slice);
        return;
      }
      const panel = createPanel(context, args.profilePath);
      await panel.load(args.profilePath, slice);
    }),
  );
}
