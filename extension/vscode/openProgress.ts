/**
 * Opening a trace in the editor with a notification of the share read and Cancel: a large trace takes seconds, and
 * the user sees how far it is and can stop it (the import stops at its next chunk, nothing half-shown). An open that
 * is over sooner shows none: the timeline's own page says "Opening profile…" meanwhile.
 */
import path from 'node:path';
import * as vscode from 'vscode';
import { openRun, type RunOptions } from '../capture/merged';
import type { OpenedProfile } from '../capture/open';
import { ImportCancelled } from '../import/kineto';

/**
 * The notification comes once an open has taken this long. Shown at once, it flashed up and away for every trace
 * read in half a second, and drawing it took the window's CPU from the page being started beside the read: the
 * 56 MB owlv2 trace's first frame came 34 ms later in ten interleaved opens each (median 695 against 661 ms).
 */
export const NOTIFY_AFTER_MS = 500;

/**
 * The notification is told the share read at most this often: each report is a message to the workbench, which
 * draws the notification again, and a report per percent cost the window's process CPU that the page needs.
 */
const REPORT_EVERY_MS = 100;

/** Opens a trace or session, with a progress notification once it takes a while; undefined when the user cancelled. */
export async function openWithProgress(
  source: string,
  label = path.basename(source),
  options: Pick<RunOptions, 'onFirstPart' | 'timings' | 'onPartial' | 'read'> = {},
): Promise<OpenedProfile | undefined> {
  const controller = new AbortController();
  let fraction = 0;
  // What the notification is told of the share read, once it is up.
  let report: ((fraction: number) => void) | undefined;
  // A run of several processes opens whole: every rank on one timeline.
  const opening = openRun(source, {
    ...options,
    signal: controller.signal,
    onProgress: (read) => {
      fraction = read;
      report?.(read);
    },
  });
  const notify = setTimeout(() => {
    void vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `FlagOS: opening ${label}`,
        cancellable: true,
      },
      (progress, token) => {
        token.onCancellationRequested(() => controller.abort());
        let shown = 0;
        let reportedAt = -Infinity;
        report = (read) => {
          const percent = Math.round(read * 100);
          const now = performance.now();
          if (percent <= shown || (now - reportedAt < REPORT_EVERY_MS && percent < 100)) return;
          reportedAt = now;
          progress.report({ increment: percent - shown, message: `${percent}% read` });
          shown = percent;
        };
        report(fraction);
        // The notification goes when the open ends, however it ends (its outcome is the caller's).
        return opening.then(
          () => undefined,
          () => undefined,
        );
      },
    );
  }, NOTIFY_AFTER_MS);
  try {
    return await opening;
  } catch (error) {
    if (error instanceof ImportCancelled) return undefined;
    throw error;
  } finally {
    clearTimeout(notify);
    report = undefined;
  }
}
