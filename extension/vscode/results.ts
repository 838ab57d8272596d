/**
 * The Results view: one editor tab that shows what a run comes to (capture/results.ts builds it), opened beside
 * the script when a run ends and from any session (Sessions view, "FlagOS: Show Results"). Its buttons reach the
 * timeline, the bring-up checks, the run's output and a comparison; a line opens the source at that line.
 */
import path from 'node:path';
import * as vscode from 'vscode';
import { analyzeOffThread } from '../analysis/offThread';
import type { SummaryJson } from '../analysis/summary';
import type { Analysis } from '../analysis/types';
import { openRun } from '../capture/merged';
import type { OpenedProfile } from '../capture/open';
import { resultsModel, type RunFacts } from '../capture/results';
import type { ResultsHostToWebview } from '../results/protocol';
import { isResultsWebviewToHost } from '../results/protocol';
import { webviewPageHtml } from './page';
import { showTimeline } from './timeline';

interface Shown {
  opened: OpenedProfile;
  analysis: Analysis;
  facts: RunFacts;
  /** Built already by the caller (with steps and memory), else built here. */
  summary?: SummaryJson;
  onShowOutput?: () => void;
}

let panel: vscode.WebviewPanel | undefined;
let shown: Shown | undefined;
let ready = false;

function post(message: ResultsHostToWebview): void {
  if (panel && ready) void panel.webview.postMessage(message);
}

function sendModel(): void {
  if (!shown) return;
  try {
    post({ type: 'results.show', model: resultsModel(shown.analysis, shown.facts, shown.summary) });
  } catch (error) {
    post({ type: 'results.error', text: `FlagOS: ${(error as Error).message}` });
  }
}

async function openLine(file: string, line: number, column?: number): Promise<void> {
  const at = new vscode.Position(Math.max(0, line - 1), Math.max(0, (column ?? 1) - 1));
  try {
    await vscode.window.showTextDocument(vscode.Uri.file(file), {
      selection: new vscode.Range(at, at),
      viewColumn: vscode.ViewColumn.One,
    });
  } catch {
    void vscode.window.showErrorMessage(
      `FlagOS: ${file} cannot be opened (it is not on this machine any more?).`,
    );
  }
}

async function onMessage(context: vscode.ExtensionContext, message: unknown): Promise<void> {
  if (!isResultsWebviewToHost(message)) return;
  switch (message.type) {
    case 'results.ready':
      ready = true;
      sendModel();
      return;
    case 'results.openTimeline':
      if (shown) showTimeline(context, shown.opened.profile, shown.analysis);
      return;
    case 'results.openBringup':
      if (shown) await vscode.commands.executeCommand('flagos.bringup.show', sourceFolder(shown.opened));
      return;
    case 'results.showOutput':
      shown?.onShowOutput?.();
      return;
    case 'results.compare':
      await vscode.commands.executeCommand('flagos.compareWith');
      return;
    case 'results.openLine':
      await openLine(message.file, message.line, message.column);
  }
}

function sourceFolder(opened: OpenedProfile): string {
  return opened.source.kind === 'session' ? opened.source.folder : opened.profile.path;
}

/** Shows a profile's results, in the one Results tab (beside the editor, keeping the focus where it is). */
export function showResults(context: vscode.ExtensionContext, next: Shown): void {
  shown = next;
  if (!panel) {
    const dist = vscode.Uri.joinPath(context.extensionUri, 'dist');
    panel = vscode.window.createWebviewPanel(
      'flagos.results',
      `Results · ${next.facts.title}`,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, localResourceRoots: [dist], retainContextWhenHidden: false },
    );
    ready = false;
    panel.webview.html = webviewPageHtml(panel.webview, {
      script: vscode.Uri.joinPath(dist, 'results.js'),
      style: vscode.Uri.joinPath(dist, 'results.css'),
      title: 'FlagOS Results',
      rootId: 'root',
    });
    panel.webview.onDidReceiveMessage((message: unknown) => onMessage(context, message));
    // A tab shown again reloads its page (no retained context): the page says ready again and gets the model.
    panel.onDidDispose(() => {
      panel = undefined;
      ready = false;
    });
  } else {
    panel.title = `Results · ${next.facts.title}`;
    panel.reveal(vscode.ViewColumn.Beside, true);
    sendModel();
  }
}

/** Opens a session or trace and shows its results (the Sessions view, "FlagOS: Show Results"). */
export async function showResultsOf(
  context: vscode.ExtensionContext,
  target: string,
  title: string,
): Promise<void> {
  try {
    // A torchrun session's results are the whole run's: every rank merged.
    const opened = await openRun(target);
    const session = opened.source.kind === 'session' ? opened.source.session?.record : undefined;
    showResults(context, {
      opened,
      analysis: await analyzeOffThread(opened.profile),
      facts: { title, source: target, session },
    });
  } catch (error) {
    void vscode.window.showErrorMessage(`FlagOS: ${(error as Error).message}`);
  }
}

export function registerResults(
  context: vscode.ExtensionContext,
  pick: () => Promise<{ folder: string; title: string } | undefined>,
): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('flagos.showResults', async (target?: unknown, title?: unknown) => {
      if (target instanceof vscode.Uri || typeof target === 'string') {
        const file = target instanceof vscode.Uri ? target.fsPath : target;
        await showResultsOf(context, file, typeof title === 'string' ? title : path.basename(file));
        return;
      }
      const chosen = await pick();
      if (chosen) await showResultsOf(context, chosen.folder, chosen.title);
    }),
    new vscode.Disposable(() => panel?.dispose()),
  );
}
