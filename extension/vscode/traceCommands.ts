/**
 * "FlagOS: Open Trace…": a Kineto trace (.json / .json.gz) or a session folder becomes a profile that the timeline
 * shows and the editor annotates. "FlagOS: Open Run Folder…": a folder of rank traces (or a torchrun session)
 * opens as one run, every rank a track group on one timeline and the editor's lines summed over the ranks.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Profile } from '../model/profile';
import { setActiveProfile } from './editorAnnotations';
import { loadForTimeline, openedAccount, showTimeline, type Loaded } from './timeline';

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
    // The first frame is counted from here: the user has picked what to open.
    const atMs = Date.now();
    // A run of several processes shows its first part (rank 0, the main process) while the others are read; a
    // single trace that reads slowly shows the events read so far.
    let shown: { first: Loaded; rest: string } | undefined;
    const loaded = await loadForTimeline(
      source,
      label,
      (first, remaining) => {
        shown = {
          first,
          rest: `${firstLabel(first.profile)} shown · cancelled: the other ${remaining} not read`,
        };
        showTimeline(context, first.profile, first.analysis, {
          source,
          partial: stillToCome(first.profile, remaining),
          opened: openedAccount(atMs, first),
        });
      },
      (partial, fraction) => {
        shown = {
          first: partial,
          rest: `${Math.floor(fraction * 100)}% of the trace read · cancelled: the rest not read`,
        };
        showTimeline(context, partial.profile, partial.analysis, {
          source,
          partial: `${Math.floor(fraction * 100)}% of the trace read · the rest opening…`,
          opened: openedAccount(atMs, partial),
        });
      },
    );
    if (!loaded) {
      // Cancelled: what is already on screen stays, saying what was not read.
      if (shown)
        showTimeline(context, shown.first.profile, shown.first.analysis, {
          source,
          partial: shown.rest,
        });
      return;
    }
    const { profile, analysis } = loaded;
    setActiveProfile(profile, analysis, label);
    showTimeline(context, profile, analysis, { source, opened: openedAccount(atMs, loaded) });
    if (profile.warnings.length > 0) {
      void vscode.window.showWarningMessage(`${label}: ${profile.warnings[0].message}`);
    }
  } catch (error) {
    void vscode.window.showErrorMessage(`FlagOS: ${(error as Error).message}`);
  }
}

/** "7 more ranks opening…", "2 more processes opening…": what the first part's timeline says is still coming. */
function firstLabel(first: Profile): string {
  const parts = first.metadata.parts as { label: string }[] | undefined;
  return parts?.[0]?.label ?? 'First part';
}

function stillToCome(first: Profile, remaining: number): string {
  const isRank = firstLabel(first).startsWith('Rank ');
  const what = isRank ? (remaining === 1 ? 'rank' : 'ranks') : remaining === 1 ? 'process' : 'processes';
  return `${firstLabel(first)} shown · ${remaining} more ${what} opening…`;
}
