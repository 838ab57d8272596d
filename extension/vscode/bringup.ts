/**
 * The bring-up view (FlagOS activity-bar container): session header, structural checks, FLAGOS_TRACE diagnostics,
 * the raw log. Failing checks also go to the Problems panel against the trace file; FLAGOS_TRACE errors and
 * warnings against the log. Other features show a profile here with the command flagos.bringup.show(pathOrUri).
 */
import * as vscode from 'vscode';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { BaselineError, parseBaseline } from '../analysis/checks';
import type { Baseline } from '../analysis/checks';
import { bringupFromLog, loadBringup } from '../bringup/load';
import type { BringupModel, BringupOptions } from '../bringup/load';
import type { BringupHostToWebview } from '../bringup/protocol';
import { isBringupWebviewToHost } from '../bringup/protocol';
import { toView } from '../bringup/view';
import { buildMarkdownReport } from '../bringup/report';
import { locateProfile } from '../capture/open';
import { sessionOfFile } from '../capture/session';
import { registerParityWorkload, isParitySession } from './bringupParity';
import { webviewPageHtml } from './page';
import { TIMELINE_VIEW_TYPE, TRACE_EDITOR_ANY_VIEW_TYPE, TRACE_EDITOR_VIEW_TYPE, titleOf } from './timeline';
import { onProfileLoaded, sessionsRoot } from './capture';
import { listSessions } from '../capture/sessions';
import type { CheckResult } from '../shared/checks';
import { eventPosition, type TextPosition } from '../bringup/position';

export const BRINGUP_VIEW_ID = 'flagos.bringup';

type Preloaded = NonNullable<BringupOptions['preloaded']>;

class BringupController implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private model: BringupModel | undefined;
  private target: string | undefined;
  get current(): string | undefined {
    return this.target;
  }
  private status: BringupHostToWebview | undefined;
  private readonly problems = vscode.languages.createDiagnosticCollection('flagos-bringup');
  private loading = 0;

  constructor(private readonly context: vscode.ExtensionContext) {}

  dispose(): void {
    this.problems.dispose();
  }

  /** A profile opened elsewhere (the trace viewer, a finished capture), shown when the view is next visible. */
  private pending: string | undefined;
  private pendingPreloaded: Preloaded | undefined;

  /** Follows the profile the user is looking at; loads only while the view is visible (or when asked to reveal). */
  follow(target: string, preloaded?: Preloaded, reveal = false): void {
    if (target === this.target && !preloaded) return;
    if (reveal || this.view?.visible) void this.show(target, reveal, preloaded);
    else {
      this.pending = target;
      this.pendingPreloaded = preloaded;
    }
  }

  private takePending(): { target: string; preloaded: Preloaded | undefined } | undefined {
    const target = this.pending;
    const preloaded = this.pendingPreloaded;
    this.pending = undefined;
    this.pendingPreloaded = undefined;
    return target ? { target, preloaded } : undefined;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.onDidChangeVisibility(
      () => {
        const next = view.visible ? this.takePending() : undefined;
        if (next) void this.show(next.target, false, next.preloaded);
      },
      undefined,
      this.context.subscriptions,
    );
    const next = !this.target ? this.takePending() : undefined;
    if (next) void this.show(next.target, false, next.preloaded);
    const dist = vscode.Uri.joinPath(this.context.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = webviewPageHtml(view.webview, {
      script: vscode.Uri.joinPath(dist, 'bringup.js'),
      style: vscode.Uri.joinPath(dist, 'bringup.css'),
      title: 'FlagOS Bring-up',
      rootId: 'root',
    });
    view.webview.onDidReceiveMessage(
      (message: unknown) => this.onMessage(message),
      undefined,
      this.context.subscriptions,
    );
    view.onDidDispose(() => (this.view = undefined), undefined, this.context.subscriptions);
  }

  private post(message: BringupHostToWebview): void {
    this.status = message;
    void this.view?.webview.postMessage(message);
  }

  private async onMessage(message: unknown): Promise<void> {
    if (!isBringupWebviewToHost(message)) return;
    switch (message.type) {
      case 'bringup.ready':
        // A view that was hidden and recreated gets the last state again.
        if (this.model) this.post({ type: 'bringup.show', view: toView(this.model) });
        else if (this.status) void this.view?.webview.postMessage(this.status);
        else this.post({ type: 'bringup.empty' });
        break;
      case 'bringup.open':
        await vscode.commands.executeCommand('flagos.bringup.show');
        break;
      case 'bringup.copyReport':
        await vscode.commands.executeCommand('flagos.copyBringupReport');
        break;
      case 'bringup.runParity':
        await vscode.commands.executeCommand('flagos.runParityWorkload');
        break;
      case 'bringup.rerun':
        if (this.target) await this.show(this.target);
        break;
      case 'bringup.openLog':
        if (this.model?.logPath) {
          const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(this.model.logPath));
          const line = Math.max(0, Math.min(doc.lineCount - 1, message.line - 1));
          await vscode.window.showTextDocument(doc, {
            selection: new vscode.Range(line, 0, line, 0),
            preview: true,
          });
        }
        break;
    }
  }

  /** Loads a trace file, a session folder or a FLAGOS_TRACE log and shows it. */
  async show(target: string, reveal = true, preloaded?: Preloaded): Promise<BringupModel | undefined> {
    const ticket = ++this.loading;
    this.target = target;
    this.pending = undefined;
    this.pendingPreloaded = undefined;
    if (reveal) await vscode.commands.executeCommand(`${BRINGUP_VIEW_ID}.focus`);
    this.post({ type: 'bringup.busy', text: `Checking ${target}…` });
    try {
      const platform =
        vscode.workspace.getConfiguration('flagos').get<string>('bringup.platform', '').trim() || undefined;
      const source = preloaded?.opened.source ?? locateProfile(target);
      const model =
        source.kind !== 'session' && /\.(jsonl|log|txt)$/i.test(target)
          ? bringupFromLog(target, readFileSync(target, 'utf8'))
          : await loadBringup(source, { baseline: configuredBaseline(), platform, preloaded });
      if (ticket !== this.loading) return undefined;
      this.model = model;
      this.post({ type: 'bringup.show', view: toView(model) });
      publishProblems(this.problems, model);
      return model;
    } catch (error) {
      if (ticket !== this.loading) return undefined;
      const text = `FlagOS: cannot check ${target}: ${(error as Error).message}`;
      this.post({ type: 'bringup.error', text });
      void vscode.window.showErrorMessage(text);
      return undefined;
    }
  }

  async copyReport(): Promise<void> {
    if (!this.model) {
      void vscode.window.showInformationMessage(
        'FlagOS: open a trace or session in the Bring-up view first (FlagOS: Show Bring-up Checks…).',
      );
      return;
    }
    await vscode.env.clipboard.writeText(buildMarkdownReport(this.model));
    void vscode.window.showInformationMessage('FlagOS: bring-up report copied to the clipboard (markdown).');
  }
}

/** The baseline of flagos.bringup.baseline, when one is set and usable. */
function configuredBaseline(): Baseline | undefined {
  const file = vscode.workspace.getConfiguration('flagos').get<string>('bringup.baseline', '').trim();
  if (!file) return undefined;
  try {
    return parseBaseline(JSON.parse(readFileSync(file, 'utf8')), file);
  } catch (error) {
    const why = error instanceof BaselineError ? error.message : `${file}: ${(error as Error).message}`;
    void vscode.window.showWarningMessage(
      `FlagOS: the baseline in flagos.bringup.baseline cannot be used (${why}); using the shipped torch-cuda baseline.`,
    );
    return undefined;
  }
}

/** The largest uncompressed trace searched for an event's position (a Problems entry is not worth more). */
const MAX_SEARCHED_TRACE_BYTES = 64 * 1024 * 1024;

/** The trace's text when it can be opened in an editor and searched: an uncompressed .json file of sane size. */
function searchableTrace(tracePath: string): string | undefined {
  try {
    if (!/\.json$/i.test(tracePath) || statSync(tracePath).size > MAX_SEARCHED_TRACE_BYTES) return undefined;
    return readFileSync(tracePath, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Where a failing check shows in Problems: the script line of the op behind it when the session recorded call
 * sites; else, in an uncompressed trace, the first example event where the file writes it; else the trace file
 * with no position of its own (VS Code needs a range: the empty one at its start, and the message says the check
 * is about the whole trace).
 */
function problemOf(
  r: CheckResult,
  tracePath: string,
  traceText: string | undefined,
): { uri: vscode.Uri; diagnostic: vscode.Diagnostic } {
  const severity = r.required ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning;
  const text = (where: string) =>
    `${r.id} ${r.title}${where}: ${r.summary}${r.hint ? `. Fix: ${r.hint}` : ''}`;
  const at = r.location;
  const found = traceText === undefined ? undefined : firstWrittenExample(r, traceText);
  let uri = vscode.Uri.file(tracePath);
  let range = new vscode.Range(0, 0, 0, 0);
  let message = text(' (the whole trace)');
  if (at && path.isAbsolute(at.file) && existsSync(at.file)) {
    uri = vscode.Uri.file(at.file);
    const line = Math.max(0, at.line - 1);
    const col = Math.max(0, (at.column ?? 1) - 1);
    const endLine = Math.max(line, (at.endLine ?? at.line) - 1);
    const endCol = at.endColumn ?? (at.column ? col + 1 : 1000);
    range = new vscode.Range(line, col, endLine, endCol);
    message = text(at.op ? ` (shown by ${at.op}, called here)` : '');
  } else if (found) {
    const { line, character } = found.position;
    range = new vscode.Range(line, character, line, character + 6);
    message = text(` (shown by this ${found.example.cat} event)`);
  }
  const diagnostic = new vscode.Diagnostic(range, message, severity);
  diagnostic.source = 'FlagOS bring-up';
  diagnostic.code = r.id;
  return { uri, diagnostic };
}

function firstWrittenExample(
  r: CheckResult,
  traceText: string,
): { example: CheckResult['examples'][number]; position: TextPosition } | undefined {
  for (const example of r.examples.slice(0, 3)) {
    const position = eventPosition(traceText, example);
    if (position) return { example, position };
  }
  return undefined;
}

/** Failing checks at the line that shows them (or on the trace), FLAGOS_TRACE errors and warnings on the log. */
function publishProblems(problems: vscode.DiagnosticCollection, model: BringupModel): void {
  problems.clear();
  const failed = model.checks?.results.filter((r) => r.status === 'fail') ?? [];
  const byFile = new Map<string, { uri: vscode.Uri; list: vscode.Diagnostic[] }>();
  const traceText =
    model.tracePath && failed.some((r) => !r.location && r.examples.length)
      ? searchableTrace(model.tracePath)
      : undefined;
  if (model.tracePath)
    for (const r of failed) {
      const { uri, diagnostic } = problemOf(r, model.tracePath, traceText);
      const entry = byFile.get(uri.toString()) ?? { uri, list: [] };
      entry.list.push(diagnostic);
      byFile.set(uri.toString(), entry);
    }
  for (const { uri, list } of byFile.values()) problems.set(uri, list);
  const logged = model.diagnostics.filter((d) => d.severity === 'error' || d.severity === 'warning');
  if (model.logPath && logged.length) {
    problems.set(
      vscode.Uri.file(model.logPath),
      logged.slice(0, 500).map((x) => {
        const line = Math.max(0, x.line - 1);
        const d = new vscode.Diagnostic(
          new vscode.Range(line, 0, line, 1000),
          `${x.component}${x.code ? ` ${x.code}` : ''}: ${x.message}`,
          x.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
        );
        d.source = 'FLAGOS_TRACE';
        if (x.code) d.code = x.code;
        return d;
      }),
    );
  }
}

/** The newest session folders, the editor's runs and the command line's in the workspace, newest first. */
function recentSessions(context: vscode.ExtensionContext, max = 5): string[] {
  const roots = [
    sessionsRoot(context),
    ...(vscode.workspace.workspaceFolders ?? []).map((f) => path.join(f.uri.fsPath, '.flagprof', 'sessions')),
  ];
  // Session folder names start with their UTC start time, so the name orders them across roots.
  return roots
    .flatMap((root) => listSessions(root))
    .sort((a, b) => path.basename(b).localeCompare(path.basename(a)))
    .slice(0, max);
}

/** Offers the run just made (and the few before it) first; any other trace, session or log through the picker. */
async function chooseTarget(
  context: vscode.ExtensionContext,
  current: string | undefined,
): Promise<string | undefined> {
  const sessions = recentSessions(context);
  if (sessions.length === 0) return pickTarget();
  type Item = vscode.QuickPickItem & { target?: string };
  const items: Item[] = sessions.map((folder, i) => ({
    label: `${i === 0 ? '$(history) ' : ''}${titleOf(folder)}`,
    description: [i === 0 && 'latest session', folder === current && 'shown now'].filter(Boolean).join(' · '),
    detail: folder,
    target: folder,
  }));
  items.push({ label: '$(folder-opened) Another trace, session folder or FLAGOS_TRACE log…' });
  const choice = await vscode.window.showQuickPick(items, {
    title: 'FlagOS: check which run?',
    matchOnDetail: true,
  });
  if (!choice) return undefined;
  return choice.target ?? pickTarget();
}

async function pickTarget(): Promise<string | undefined> {
  const picked = await vscode.window.showOpenDialog({
    canSelectFiles: true,
    canSelectFolders: true,
    canSelectMany: false,
    openLabel: 'Check',
    title: 'A trace (.json, .json.gz), a capture session folder, or a FLAGOS_TRACE log',
  });
  return picked?.[0]?.fsPath;
}

/** The trace viewer's custom editors. */
const TRACE_VIEW_TYPES = new Set([TRACE_EDITOR_VIEW_TYPE, TRACE_EDITOR_ANY_VIEW_TYPE]);

function activeTraceEditor(): string | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (
    input instanceof vscode.TabInputCustom &&
    TRACE_VIEW_TYPES.has(input.viewType) &&
    input.uri.scheme === 'file'
  )
    // A session's own trace stands for the whole session (its log and session.json too).
    return sessionOfFile(input.uri.fsPath) ?? input.uri.fsPath;
  return undefined;
}

/**
 * The session a timeline panel shows, when it is the active tab. The panel's tab says only its title (the
 * session's "train.py · 18:02", see titleOf), so it is matched against the titles of the recent sessions.
 */
function activeTimelinePanel(context: vscode.ExtensionContext): string | undefined {
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  const input = tab?.input;
  if (!(input instanceof vscode.TabInputWebview) || !input.viewType.endsWith(TIMELINE_VIEW_TYPE))
    return undefined;
  const matches = recentSessions(context, 20).filter((folder) => titleOf(folder) === tab?.label);
  return matches.length === 1 ? matches[0] : undefined;
}

function targetOf(arg: unknown): string | undefined {
  if (arg instanceof vscode.Uri) return arg.fsPath;
  if (typeof arg === 'string' && arg) return arg;
  return undefined;
}

/** What identifies the active tab of the active group: its kind, its file or title. */
function activeTabKey(): string {
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  const input = tab?.input;
  if (input instanceof vscode.TabInputCustom) return `custom:${input.uri.toString()}`;
  if (input instanceof vscode.TabInputWebview) return `webview:${input.viewType}:${tab?.label}`;
  return `other:${tab?.label ?? ''}`;
}

let lastActiveTab = '';

/**
 * Only a change of the active tab moves the view: a tab opened beside (a run's results) leaves the active one as
 * it was, and must not take the view back from the run just shown.
 */
function followActiveTab(context: vscode.ExtensionContext, controller: BringupController): void {
  const key = activeTabKey();
  if (key === lastActiveTab) return;
  lastActiveTab = key;
  const target = activeTraceEditor() ?? activeTimelinePanel(context);
  if (target) controller.follow(target);
}

export function registerBringup(context: vscode.ExtensionContext): void {
  const controller = new BringupController(context);
  context.subscriptions.push(
    controller,
    vscode.window.registerWebviewViewProvider(BRINGUP_VIEW_ID, controller),
    vscode.commands.registerCommand('flagos.bringup.show', async (arg?: unknown) => {
      const target = targetOf(arg) ?? (await chooseTarget(context, controller.current));
      if (target) await controller.show(target);
    }),
    vscode.commands.registerCommand('flagos.copyBringupReport', () => controller.copyReport()),
    // Switching tabs, and switching editor groups (a group's active tab does not change then), both move the view.
    vscode.window.tabGroups.onDidChangeTabs(() => followActiveTab(context, controller)),
    vscode.window.tabGroups.onDidChangeTabGroups(() => followActiveTab(context, controller)),
  );
  registerParityWorkload(context);
  // Every finished capture: its checks and diagnostics, revealed at once for the parity workload.
  context.subscriptions.push(
    onProfileLoaded((opened, analysis) => {
      if (opened.source.kind !== 'session') return;
      const { folder, session } = opened.source;
      controller.follow(folder, { opened, analysis }, isParitySession(folder, session?.record));
    }),
  );
}
