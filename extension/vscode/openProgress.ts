/**
 * Opening a trace in the editor as a notification with the share read and Cancel: a 56 MB trace takes seconds,
 * and the user sees how far it is and can stop it (the import stops at its next chunk, nothing half-shown).
 */
import path from 'node:path';
import * as vscode from 'vscode';
import { openRun, type RunOptions } from '../capture/merged';
import type { OpenedProfile } from '../capture/open';
import { ImportCancelled } from '../import/kineto';

/**
 * The notification is told the share read at most this often: each report is a message to the workbench, which
 * draws the notification again, and a report per percent cost the window's process CPU that the page needs.
 */
const REPORT_EVERY_MS = 100;

/** Opens a trace or session with a progress notification; undefined when the user cancelled. */
export async function openWithProgress(
  source: string,
  label = path.basename(source),
  options: Pick<RunOptions, 'onFirstPart' | 'timings' | 'onPartial'> = {},
): Promise<OpenedProfile | undefined> {
  const controller = new AbortController();
  try {
    return await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `FlagOS: opening ${label}`,
        cancellable: true,
      },
      async (progress, token) => {
        token.onCancellationRequested(() => controller.abort());
        let shown = 0;
        let reportedAt = performance.now();
        // A run of several processes opens whole: every rank on one timeline.
        return openRun(source, {
          ...options,
          signal: controller.signal,
          onProgress: (fraction) => {
            const percent = Math.round(fraction * 100);
            const now = performance.now();
            if (now - reportedAt < REPORT_EVERY_MS && percent < 100) return;
            reportedAt = now;
            progress.report({ increment: percent - shown, message: `${percent}% read` });
            shown = percent;
          },
        });
      },
    );
  } catch (error) {
    if (error instanceof ImportCancelled) return undefined;
    throw error;
  }
}
