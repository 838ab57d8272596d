/**
 * "Show in timeline" from the editor: opens (or reveals) the profile's timeline with the line's longest slice
 * selected, so its kernels and flows are in view.
 */
import type * as vscode from 'vscode';
import type { LoadedProfile } from './editorAnnotations';
import { showTimeline } from './timeline';

export function revealSlices(
  context: vscode.ExtensionContext,
  loaded: LoadedProfile,
  slices: ArrayLike<number>,
): void {
  if (slices.length === 0) return;
  const { dur } = loaded.profile.slices;
  let select = slices[0];
  for (let i = 1; i < slices.length; i++) if (dur[slices[i]] > dur[select]) select = slices[i];
  showTimeline(context, loaded.profile, loaded.analysis, { select });
}
