/**
 * "FlagOS: Open Trace…": a Kineto trace (.json / .json.gz) or a session folder becomes a profile that the timeline
 * shows and the editor annotates. "FlagOS: Open Run Folder…": a folder of rank traces (or a torchrun session)
 * opens as one run, every rank a track group on one timeline and the editor's lines summed over the ranks.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { analyze } from '../analysis/analyze';
import { openWithProgress } from './openProgress';
import { setActiveProfile } from './editorAnnotations';
import { showTimeline } from './timeline';

export function registerTraceCommands(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('flagos.openTrace', async (target?: vscode.Uri) => {
      const uri = target ?? (await pickTrace());
      if (!uri) return;
      await openTrace(context, uri.fsPath);
    }),
    vscode.commands.registerCommand('flagos.openRunFolder', async (target?: vscode.Uri) => {
      const uri = target ?? (await pickRunFolder());
      if (!uri) return;
      await openTrace(context, uri.fsPath);
    }),
  );
}

/** Folders and files cannot be picked in one dialog on every platform: a folder has a command of its own. */
async function pickRunFolder(): Promise<vscode.Uri | undefined> {
  const picked = await vscode.window.showOpenDialog({
    title: 'Open a folder of rank traces, or a multi-process session',
    canSelectMany: false,
    canSelectFiles: false,
    canSelectFolders: true,
  });
  return picked?.[0];
}

async function pickTrace(): Promise<vscode.Uri | undefined> {
  const picked = await vscode.window.showOpenDialog({
    title: 'Open a PyTorch profiler trace',
    canSelectMany: false,
    canSelectFolders: false,
    filters: { 'Kineto traces': ['json', 'gz'], 'All files': ['*'] },
  });
  return picked?.[0];
}

/** Loads, analyses and shows a trace or session folder; errors are one clear message, never a stack. */
export async function openTrace(
  context: vscode.ExtensionContext,
  source: string,
  label = path.basename(source),
): Promise<void> {
  try {
    const opened = await openWithProgress(source, label);
    if (!opened) return; // cancelled: nothing half-shown
    const { profile } = opened;
    const analysis = analyze(profile);
    setActiveProfile(profile, analysis, label);
    showTimeline(context, profile, analysis, { source });
    if (profile.warnings.length > 0) {
      void vscode.window.showWarningMessage(`${label}: ${profile.warnings[0].message}`);
    }
  } catch (error) {
    void vscode.window.showErrorMessage(`FlagOS: ${(error as Error).message}`);
  }
}
