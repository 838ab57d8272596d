/**
 * Device time on the user's own lines: which profile annotates the editor, how its lines follow edits, the status
 * bar item, and the commands. Providers and decorations (editorProviders.ts) read the state kept here.
 *
 * Other features call setActiveProfile() when a profile finishes loading (Open Trace, Profile Current File).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Profile } from '../model/profile';
import { labelText, markdownText } from '../shared/text';
import type { Analysis } from '../analysis/types';
import {
  buildLineIndex,
  currentLine,
  DocumentLines,
  lookupFile,
  normalizePath,
  profiledLines,
  type FileIndex,
  type LineEntry,
  type LineIndex,
  type LineShiftMap,
  type TextChange,
} from '../analysis/lineIndex';
import { registerEditorProviders } from './editorProviders';
import { revealSlices } from './editorTimeline';
import { formatDuration } from '../shared/format';
import { analyzeOffThread } from '../analysis/offThread';
import { openWithProgress } from './openProgress';

/** A part of a merged run (import/merge.ts writes them in metadata.parts): its label and its own trace. */
interface RunPart {
  label: string;
  path: string;
}

function runParts(profile: Profile): RunPart[] {
  const parts = profile.metadata.parts;
  if (!Array.isArray(parts)) return [];
  return parts.filter(
    (p): p is RunPart => typeof p?.label === 'string' && typeof p?.path === 'string' && p.path !== '',
  );
}

export interface LoadedProfile {
  /** The profile's file: one entry per file. */
  readonly key: string;
  readonly label: string;
  readonly profile: Profile;
  readonly analysis: Analysis;
  readonly index: LineIndex;
}

/** How a document's current lines relate to the lines of the file as it was profiled. */
export interface DocumentAnnotations {
  readonly loaded: LoadedProfile;
  readonly file: FileIndex;
  /** The reason shown to the user when the file changed in a way that cannot be mapped; annotations are dimmed. */
  readonly staleMessage: string | undefined;
  /** The entry shown on a current 0-based line, if any. O(1). */
  entryAt(line: number): LineEntry | undefined;
  /** The current 0-based line of a profiled 1-based line, or -1 (deleted). */
  currentLineOf(profiledLine: number): number;
}

class DocumentTracker implements DocumentAnnotations {
  private readonly lines: DocumentLines;
  private inverse: Int32Array | undefined;
  /** Text at close, so a reopened document that did not change keeps its map. */
  closedText: string | undefined;

  constructor(
    readonly loaded: LoadedProfile,
    readonly file: FileIndex,
    document: vscode.TextDocument,
    diskText: string | undefined,
    diskNewer: boolean,
  ) {
    this.lines = new DocumentLines({
      tracked: file.lines.map((l) => l.line - 1),
      minLines: maxLine(file),
      text: document.getText(),
      lineCount: document.lineCount,
      diskText,
      diskNewer,
    });
  }

  get map(): LineShiftMap {
    return this.lines.map;
  }

  get lineCount(): number {
    return this.lines.lineCount;
  }

  get staleMessage(): string | undefined {
    if (!this.map.unmappable) return undefined;
    return `The profile is older than this file (${this.map.unmappable}): annotations may not match the lines. Profile again to refresh them.`;
  }

  apply(event: vscode.TextDocumentChangeEvent): void {
    const changes: TextChange[] = event.contentChanges.map((c) => ({
      startLine: c.range.start.line,
      startCharacter: c.range.start.character,
      endLine: c.range.end.line,
      endCharacter: c.range.end.character,
      text: c.text,
      headBlank:
        event.contentChanges.length === 1
          ? event.document.lineAt(c.range.start.line).text.slice(0, c.range.start.character).trim() === ''
          : undefined,
    }));
    if (this.lines.apply(changes, () => event.document.getText(), event.document.lineCount))
      this.inverse = undefined;
  }

  entryAt(line: number): LineEntry | undefined {
    if (this.map.unmappable) return this.file.byLine.get(line + 1);
    if (!this.map.shifted) return this.file.byLine.get(line + 1);
    this.inverse ??= profiledLines(this.map, this.lineCount);
    const profiled = line < this.inverse.length ? this.inverse[line] : -1;
    return profiled < 0 ? undefined : this.file.byLine.get(profiled + 1);
  }

  currentLineOf(profiledLine: number): number {
    if (this.map.unmappable) return profiledLine - 1;
    return currentLine(this.map, profiledLine - 1);
  }
}

function maxLine(file: FileIndex): number {
  let max = 0;
  for (const l of file.lines) if (l.line > max) max = l.line;
  for (const f of file.functions) if (f.firstLine > max) max = f.firstLine;
  return max;
}

/** Profile start in epoch milliseconds, when the trace says (used to tell a file saved after the profile). */
function profileStartMs(profile: Profile): number | undefined {
  const ms = Number(profile.originNs / 1_000_000n);
  // Traces without an absolute clock start near 0: no comparison is possible then.
  return ms > Date.UTC(2001, 0, 1) ? ms : undefined;
}

/** The file's path with symbolic links resolved, or undefined when it does not exist here. */
function realPath(file: string): string | undefined {
  try {
    return fs.realpathSync.native(file);
  } catch {
    return undefined;
  }
}

/** Characters a glob reads as patterns, each written as a one-character class so a file name matches as itself. */
function globLiteral(name: string): string {
  return name.replace(/[[\]{}*?!,]/g, (c) => `[${c}]`);
}

/**
 * The file here that a path of the profile names: the path itself when it exists, otherwise a workspace file
 * that the editor's own matching (lookupFile) ties to the same profiled file.
 */
async function localFileOf(loaded: LoadedProfile, file: string): Promise<vscode.Uri | undefined> {
  if (realPath(file) !== undefined) return vscode.Uri.file(file);
  const wanted = loaded.index.files.get(normalizePath(file));
  if (!wanted) return undefined;
  const name = file.split(/[\\/]/).pop() ?? '';
  if (name === '') return undefined;
  const candidates = await vscode.workspace.findFiles(`**/${globLiteral(name)}`, '**/node_modules/**', 200);
  return candidates.find(
    (uri) =>
      lookupFile(loaded.index, uri.fsPath, {
        workspaceFolder: vscode.workspace.getWorkspaceFolder(uri)?.uri.fsPath,
        realPath,
      }) === wanted,
  );
}

/** Profiles kept for switching from the status bar. */
const MAX_PROFILES = 5;

export class EditorAnnotations implements vscode.Disposable {
  private readonly profiles: LoadedProfile[] = [];
  private activeProfile: LoadedProfile | undefined;
  private readonly trackers = new Map<string, DocumentTracker | null>();
  private readonly pending = new Map<string, Promise<DocumentTracker | null>>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri | undefined>();
  /** Fires with a document's uri when its annotations moved, or undefined when everything changed. */
  readonly onDidChange = this.changed.event;
  private readonly statusItem: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];

  constructor() {
    this.statusItem = vscode.window.createStatusBarItem(
      'flagos.annotations',
      vscode.StatusBarAlignment.Left,
      50,
    );
    this.statusItem.name = 'FlagOS Profiler annotations';
    this.statusItem.command = 'flagos.chooseAnnotationProfile';
    this.disposables.push(
      this.statusItem,
      this.changed,
      vscode.workspace.onDidChangeTextDocument((e) => this.onDocumentChanged(e)),
      vscode.workspace.onDidCloseTextDocument((d) => {
        const tracker = this.trackers.get(d.uri.toString());
        if (tracker) tracker.closedText = d.getText();
        else this.trackers.delete(d.uri.toString());
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.updateStatus()),
    );
    this.updateStatus();
  }

  get active(): LoadedProfile | undefined {
    return this.activeProfile;
  }

  get loaded(): readonly LoadedProfile[] {
    return this.profiles;
  }

  /** Makes a profile the one annotating the editor; a profile of the same file replaces the older one. */
  setActive(profile: Profile, analysis: Analysis, label: string): LoadedProfile {
    const index = buildLineIndex(analysis, {
      readSource: (file) => {
        try {
          return fs.readFileSync(file, 'utf8');
        } catch {
          return undefined; // profiled elsewhere: functions are told apart by name only
        }
      },
    });
    const loaded: LoadedProfile = { key: profile.path, label, profile, analysis, index };
    const existing = this.profiles.findIndex((p) => p.key === loaded.key);
    if (existing >= 0) this.profiles.splice(existing, 1);
    this.profiles.unshift(loaded);
    // Each profile holds its slices in memory: keep the few most recent ones to switch between.
    this.profiles.length = Math.min(this.profiles.length, MAX_PROFILES);
    this.select(loaded);
    return loaded;
  }

  select(loaded: LoadedProfile | undefined): void {
    this.activeProfile = loaded;
    this.trackers.clear();
    this.pending.clear();
    this.updateStatus();
    this.changed.fire(undefined);
  }

  clear(): void {
    this.select(undefined);
  }

  /** The annotations of a document under the active profile, undefined when it has none (or is still loading). */
  annotationsNow(document: vscode.TextDocument): DocumentAnnotations | undefined {
    return this.trackers.get(document.uri.toString()) ?? undefined;
  }

  /** Like annotationsNow, but reads the file from disk the first time a document is seen. */
  async annotations(document: vscode.TextDocument): Promise<DocumentAnnotations | undefined> {
    const key = document.uri.toString();
    const known = this.trackers.get(key);
    if (known !== undefined) {
      if (known && known.closedText !== undefined) {
        // Reopened: keep the map only if nothing changed while it was closed.
        if (known.closedText === document.getText()) known.closedText = undefined;
        else this.trackers.delete(key);
      }
      const again = this.trackers.get(key);
      if (again !== undefined) return again ?? undefined;
    }
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.createTracker(document);
      this.pending.set(key, pending);
    }
    const tracker = await pending;
    if (this.pending.get(key) !== pending) {
      // Superseded while the file was read: the text changed (the tracker saw the old one) or another profile was
      // chosen (it gave none). The caller gets what the current state gives, not what this read saw.
      return this.annotations(document);
    }
    this.pending.delete(key);
    this.trackers.set(key, tracker);
    // The status bar names the profile annotating the active editor's file, and warns when it cannot be mapped:
    // both known only now.
    if (tracker && document === vscode.window.activeTextEditor?.document) this.updateStatus();
    return tracker ?? undefined;
  }

  /**
   * The profile that annotates a document, and the document's file in it: the chosen profile when it profiled the
   * file, else the most recent loaded profile that did. Opening a trace of other code (a colleague's, a vendor's)
   * makes it the chosen one without taking the annotations of the user's own run off the user's files.
   */
  private profileOf(document: vscode.TextDocument): { loaded: LoadedProfile; file: FileIndex } | undefined {
    const chosen = this.activeProfile;
    if (!chosen) return undefined;
    const options = {
      workspaceFolder: vscode.workspace.getWorkspaceFolder(document.uri)?.uri.fsPath,
      realPath,
    };
    for (const loaded of [chosen, ...this.profiles.filter((p) => p !== chosen)]) {
      const file = lookupFile(loaded.index, document.uri.fsPath, options);
      if (file) return { loaded, file };
    }
    return undefined;
  }

  private async createTracker(document: vscode.TextDocument): Promise<DocumentTracker | null> {
    const chosen = this.activeProfile;
    if (!chosen || document.uri.scheme !== 'file') return null;
    const found = this.profileOf(document);
    if (!found) return null;
    const { loaded, file } = found;
    let diskText: string | undefined;
    let diskNewer = false;
    try {
      const [text, stat] = await Promise.all([
        fs.promises.readFile(document.uri.fsPath, 'utf8'),
        fs.promises.stat(document.uri.fsPath),
      ]);
      diskText = text.replace(/\r\n/g, '\n');
      const start = profileStartMs(loaded.profile);
      // A save during or after the profiled run means the profiled text is gone (Profile Current File saves first).
      diskNewer = start !== undefined && stat.mtimeMs > start + 500;
    } catch {
      // Unreadable on disk (deleted, or another checkout): the open text is all there is.
    }
    if (this.activeProfile !== chosen) return null;
    return new DocumentTracker(loaded, file, document, diskText, diskNewer);
  }

  private onDocumentChanged(event: vscode.TextDocumentChangeEvent): void {
    if (event.contentChanges.length === 0) return;
    const key = event.document.uri.toString();
    const tracker = this.trackers.get(key);
    if (!tracker) {
      // Still reading from disk: start over once it is done, from the new text.
      if (this.pending.has(key)) this.pending.delete(key);
      return;
    }
    const wasStale = tracker.staleMessage !== undefined;
    const before = tracker.map;
    tracker.apply(event);
    if (tracker.map !== before) {
      this.changed.fire(event.document.uri);
      if (wasStale !== (tracker.staleMessage !== undefined)) this.updateStatus();
    }
  }

  updateStatus(): void {
    const active = this.activeProfile;
    if (this.profiles.length === 0) {
      this.statusItem.hide();
      return;
    }
    if (!active) {
      this.statusItem.text = '$(flame) FlagOS: no annotations';
      this.statusItem.tooltip = 'No profile annotates the editor. Click to choose one.';
      this.statusItem.show();
      return;
    }
    const editor = vscode.window.activeTextEditor;
    const tracker = editor ? this.trackers.get(editor.document.uri.toString()) : undefined;
    const stale = tracker?.staleMessage;
    // The editor's file may be annotated by another loaded profile than the chosen one (the last that profiled it).
    const shown = tracker?.loaded ?? active;
    this.statusItem.text = `${stale ? '$(warning)' : '$(flame)'} FlagOS: ${labelText(shown.label, 60)}`;
    const level = shown.index.exact ? 'exact call sites' : 'function level (the trace has no call sites)';
    // The label and path come from the trace's file name: text only, no HTML, no commands.
    const tooltip = new vscode.MarkdownString(
      `Annotations from **${markdownText(shown.label)}** — ${level}.\n\n${markdownText(shown.key, Infinity)}${stale ? `\n\n$(warning) ${markdownText(stale, Infinity)}` : ''}\n\nClick to switch profiles or clear the annotations.`,
      true,
    );
    tooltip.isTrusted = false;
    tooltip.supportHtml = false;
    this.statusItem.tooltip = tooltip;
    this.statusItem.show();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

let annotations: EditorAnnotations | undefined;

/**
 * Shows a profile's device time in the editor (hovers, gutter heat, inline text, CodeLens) and makes it the
 * profile the status bar names. Called by every feature that loads a profile.
 */
export function setActiveProfile(profile: Profile, analysis: Analysis, label?: string): void {
  const name = label ?? path.basename(profile.path);
  annotations?.setActive(profile, analysis, name);
}

/** The state, for the providers and tests inside the extension host. */
export function editorAnnotations(): EditorAnnotations | undefined {
  return annotations;
}

interface LineArgs {
  file: string;
  line: number;
}

interface FunctionArgs {
  file: string;
  function: string;
}

export function registerEditorAnnotations(context: vscode.ExtensionContext): void {
  const state = new EditorAnnotations();
  annotations = state;
  context.subscriptions.push(state, { dispose: () => (annotations = undefined) });
  registerEditorProviders(context, state);

  // The chosen profile first, then the others: a file may be annotated by the last profile that profiled it.
  const entryOf = (args: LineArgs | undefined): { loaded: LoadedProfile; entry: LineEntry } | undefined => {
    const chosen = state.active;
    if (!chosen || !args) return undefined;
    for (const loaded of [chosen, ...state.loaded.filter((p) => p !== chosen)]) {
      const entry = loaded.index.files.get(normalizePath(args.file))?.byLine.get(args.line);
      if (entry) return { loaded, entry };
    }
    return undefined;
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('flagos.clearAnnotations', () => state.clear()),
    vscode.commands.registerCommand('flagos.chooseAnnotationProfile', async () => {
      type Item = vscode.QuickPickItem & { loaded?: LoadedProfile; clear?: boolean; part?: RunPart };
      const items: Item[] = state.loaded.map((loaded) => ({
        label: `${loaded === state.active ? '$(check) ' : ''}${labelText(loaded.label)}`,
        description: loaded.index.exact ? 'exact call sites' : 'function level',
        detail: labelText(loaded.key, Infinity),
        loaded,
      }));
      // A run of several ranks annotates with all of them summed; one rank alone is a choice here.
      const run = state.active;
      const parts = run ? runParts(run.profile) : [];
      if (parts.length > 0)
        items.push({ label: 'Ranks of this run', kind: vscode.QuickPickItemKind.Separator });
      for (const part of parts) {
        items.push({
          label: `$(server-process) ${labelText(part.label)} only`,
          description: 'this rank’s time alone (the run shows all ranks summed)',
          detail: labelText(part.path, Infinity),
          part,
        });
      }
      if (items.length === 0) {
        void vscode.window.showInformationMessage(
          'No profile is loaded. Run "FlagOS: Profile Current File" or "FlagOS: Open Trace…".',
        );
        return;
      }
      items.push({ label: '', kind: vscode.QuickPickItemKind.Separator });
      items.push({ label: '$(clear-all) Clear annotations', clear: true });
      const picked = await vscode.window.showQuickPick(items, {
        placeHolder: 'Profile that annotates the editor',
      });
      if (!picked) return;
      if (picked.clear) state.clear();
      else if (picked.loaded) state.select(picked.loaded);
      else if (picked.part && run) {
        try {
          const opened = await openWithProgress(picked.part.path, picked.part.label);
          if (opened)
            state.setActive(
              opened.profile,
              await analyzeOffThread(opened.profile),
              `${run.label} · ${picked.part.label}`,
            );
        } catch (error) {
          void vscode.window.showErrorMessage(`FlagOS: ${(error as Error).message}`);
        }
      }
    }),
    vscode.commands.registerCommand('flagos.showLineInTimeline', (args?: LineArgs) => {
      const hit = entryOf(args);
      if (!hit) return;
      revealSlices(context, hit.loaded, hit.entry.slices);
    }),
    vscode.commands.registerCommand('flagos.openProfiledLine', async (args?: LineArgs) => {
      const loaded = state.active;
      if (!loaded || !args || typeof args.file !== 'string' || !Number.isInteger(args.line)) return;
      const uri = await localFileOf(loaded, args.file);
      if (!uri) {
        void vscode.window.showWarningMessage(
          `FlagOS: ${labelText(path.basename(args.file))} is not in this workspace (the profile names ${labelText(args.file, Infinity)}).`,
        );
        return;
      }
      const document = await vscode.workspace.openTextDocument(uri);
      // The line as profiled, where it is now if the file was edited since.
      const followed = (await state.annotations(document))?.currentLineOf(args.line) ?? -1;
      const line = Math.min(followed >= 0 ? followed : args.line - 1, document.lineCount - 1);
      const at = new vscode.Range(Math.max(0, line), 0, Math.max(0, line), 0);
      await vscode.window.showTextDocument(document, { selection: at });
    }),
    vscode.commands.registerCommand('flagos.showFunctionInTimeline', (args?: FunctionArgs) => {
      const chosen = state.active;
      if (!chosen || !args) return;
      const loaded = [chosen, ...state.loaded.filter((p) => p !== chosen)].find((p) =>
        p.index.files.has(normalizePath(args.file)),
      );
      const file = loaded?.index.files.get(normalizePath(args.file));
      if (!loaded || !file) return;
      const slices = file.lines.filter((l) => l.function === args.function).flatMap((l) => [...l.slices]);
      revealSlices(context, loaded, slices);
    }),
    vscode.commands.registerCommand('flagos.showLineKernels', async (args?: LineArgs) => {
      const hit = entryOf(args);
      if (!hit) return;
      const { loaded, entry } = hit;
      const { profile } = loaded;
      type Item = vscode.QuickPickItem & { name: string };
      const items: Item[] = entry.kernels.map((k) => ({
        label: labelText(k.name),
        description: `${k.count}× · ${formatDuration(k.totalNs)}`,
        name: k.name,
      }));
      const picked = await vscode.window.showQuickPick(items, {
        placeHolder: `Kernels launched from line ${entry.line} — pick one to show it in the timeline`,
        matchOnDescription: true,
      });
      if (!picked) return;
      const slices = [...entry.kernelSlices].filter((d) => profile.nameOf(d) === picked.name);
      revealSlices(context, loaded, slices);
    }),
  );
}
