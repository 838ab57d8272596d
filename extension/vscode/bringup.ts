/**
 * The bring-up view (FlagOS activity-bar container): session header, structural checks, FLAGOS_TRACE diagnostics,
 * the raw log. Failing checks also go to the Problems panel against the trace file; FLAGOS_TRACE errors and
 * warnings against the log. Other features show a profile here with the command flagos.bringup.show(pathOrUri).
 */
import * as vscode from 'vscode';
import { readFileSync } from 'node:fs';
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
import { TRACE_EDITOR_ANY_VIEW_TYPE, TRACE_EDITOR_VIEW_TYPE } from './timeline';
import { onProfileLoaded } from './capture';

export const BRINGUP_VIEW_ID = 'flagos.bringup';

type Preloaded = NonNullable<BringupOptions['preloaded']>;

class BringupController implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private model: BringupModel | undefined;
  private target: string | undefined;
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

/** Failing checks against the trace file, FLAGOS_TRACE errors and warnings against the log. */
function publishProblems(problems: vscode.DiagnosticCollection, model: BringupModel): void {
  problems.clear();
  const failed = model.checks?.results.filter((r) => r.status === 'fail') ?? [];
  if (model.tracePath && failed.length) {
    problems.set(
      vscode.Uri.file(model.tracePath),
      failed.map((r) => {
        const d = new vscode.Diagnostic(
          new vscode.Range(0, 0, 0, 0),
          `${r.id} ${r.title}: ${r.summary}${r.hint ? `. Fix: ${r.hint}` : ''}`,
          r.required ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
        );
        d.source = 'FlagOS bring-up';
        d.code = r.id;
        return d;
      }),
    );
  }
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

function targetOf(arg: unknown): string | undefined {
  if (arg instanceof vscode.Uri) return arg.fsPath;
  if (typeof arg === 'string' && arg) return arg;
  return undefined;
}

export function registerBringup(context: vscode.ExtensionContext): void {
  const controller = new BringupController(context);
  context.subscriptions.push(
    controller,
    vscode.window.registerWebviewViewProvider(BRINGUP_VIEW_ID, controller),
    vscode.commands.registerCommand('flagos.bringup.show', async (arg?: unknown) => {
      const target = targetOf(arg) ?? (await pickTarget());
      if (target) await controller.show(target);
    }),
    vscode.commands.registerCommand('flagos.copyBringupReport', () => controller.copyReport()),
    vscode.window.tabGroups.onDidChangeTabs(() => {
      const target = activeTraceEditor();
      if (target) controller.follow(target);
    }),
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
