/**
 * "FlagOS: Compare with…": a base run for the profile that annotates the editor. Hovers then show each line's Δ
 * against it (lines matched across edits as `flagprof diff` matches them: analysis/diff.ts), and the full diff is
 * a Markdown document beside the editor. The base is any session of the Sessions view or a trace file.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as vscode from 'vscode';
import { analyze } from '../analysis/analyze';
import { diffAnalyses, type DiffRun, type LineDiff, type ProfileDiff } from '../analysis/diff';
import { diffRunOf } from '../capture/diffRun';
import { openProfile } from '../capture/open';
import { readSessionFile } from '../capture/session';
import { formatDuration } from '../shared/format';
import { markdownText } from '../shared/text';
import { editorAnnotations, type LoadedProfile } from './editorAnnotations';
import type { SessionEntry } from './sessions';

interface Comparison {
  label: string;
  base: DiffRun;
  /** The diff against the active profile it was computed for. */
  activeKey?: string;
  diff?: ProfileDiff;
  byLine?: Map<string, LineDiff>;
}

let comparison: Comparison | undefined;
const changed = new vscode.EventEmitter<void>();
/** Fires when the base run changes (hovers and CodeLens read it again). */
export const onComparisonChanged = changed.event;

function lineKey(file: string, line: number): string {
  return `${path.resolve(file)}\n${line}`;
}

function activeRun(active: LoadedProfile): DiffRun {
  const folder = path.dirname(active.profile.path);
  const session = existsSync(path.join(folder, 'session.json')) ? readSessionFile(folder)?.record : undefined;
  return diffRunOf(active.profile, active.analysis, session, active.label);
}

/** The diff of a profile (by default the chosen one) against the base, computed once per profile. */
function currentDiff(active = editorAnnotations()?.active): Comparison | undefined {
  if (!comparison || !active) return undefined;
  if (comparison.activeKey !== active.key) {
    const run = activeRun(active);
    const diff = diffAnalyses(comparison.base, run);
    const byLine = new Map<string, LineDiff>();
    for (const row of diff.lines) {
      if (row.lineB === null) continue;
      const file = path.isAbsolute(row.file) || !run.root ? row.file : path.join(run.root, row.file);
      byLine.set(lineKey(file, row.lineB), row);
    }
    Object.assign(comparison, { activeKey: active.key, diff, byLine });
  }
  return comparison;
}

/** The hover's comparison for a line of the active profile (file and line as the profile names them). */
export function baselineFor(
  loaded: LoadedProfile,
  file: string,
  line: number,
): { label: string; row: LineDiff | undefined } | undefined {
  const current = currentDiff(loaded);
  return current && { label: current.label, row: current.byLine?.get(lineKey(file, line)) };
}

function signed(ns: number): string {
  return ns === 0 ? '±0' : `${ns > 0 ? '+' : '−'}${formatDuration(Math.abs(ns))}`;
}

/** The diff as Markdown: totals, then the lines with the largest change (edited lines first). */
export function diffMarkdown(diff: ProfileDiff, baseLabel: string, activeLabel: string, top = 15): string {
  const out = [`# ${markdownText(activeLabel)} vs ${markdownText(baseLabel)}`, ''];
  for (const note of diff.notes) out.push(`> ${markdownText(note, Infinity)}`, '');
  out.push('| | base | this run | Δ |', '|:--|--:|--:|--:|');
  const totals: [string, { a: number; b: number; deltaNs: number }][] = [
    ['wall', diff.totals.wallNs],
    ['CPU (in ops)', diff.totals.cpuNs],
  ];
  if (diff.a.hasDevice || diff.b.hasDevice) totals.push(['device', diff.totals.deviceNs]);
  for (const [name, t] of totals)
    out.push(`| ${name} | ${formatDuration(t.a)} | ${formatDuration(t.b)} | ${signed(t.deltaNs)} |`);
  out.push('', '| Line | Function | Δ | Calls | |', '|:--|:--|--:|--:|:--|');
  for (const row of diff.lines.slice(0, top)) {
    const at = row.lineB ?? row.lineA;
    const moved =
      row.lineA !== null && row.lineB !== null && row.lineA !== row.lineB ? ` (was ${row.lineA})` : '';
    const status = [row.edited ? 'edited' : '', row.status === 'both' ? '' : row.status]
      .filter(Boolean)
      .join(', ');
    out.push(
      `| ${markdownText(path.basename(row.file))}:${at}${moved} | ${markdownText(row.function)} | ${signed(row.deltaNs)} | ${row.a?.calls ?? '—'} → ${row.b?.calls ?? '—'} | ${status} |`,
    );
  }
  return `${out.join('\n')}\n`;
}

interface BaseItem extends vscode.QuickPickItem {
  folder?: string;
  browse?: boolean;
  stop?: boolean;
}

async function pickBase(
  sessions: () => SessionEntry[],
  labelOf: (e: SessionEntry) => string,
): Promise<BaseItem | undefined> {
  const activeKey = editorAnnotations()?.active?.key;
  const items: BaseItem[] = sessions()
    .filter((entry) => !activeKey || !activeKey.startsWith(entry.folder + path.sep))
    .map((entry) => ({
      label: labelOf(entry),
      description: entry.record?.mode?.chosen,
      folder: entry.folder,
    }));
  items.push({ label: 'Open a trace file…', browse: true, alwaysShow: true });
  if (comparison)
    items.push({ label: `Stop comparing with ${comparison.label}`, stop: true, alwaysShow: true });
  return vscode.window.showQuickPick(items, { title: 'FlagOS: compare the annotated profile with…' });
}

export function registerCompare(
  context: vscode.ExtensionContext,
  sessions: () => SessionEntry[],
  labelOf: (entry: SessionEntry) => string,
): void {
  context.subscriptions.push(
    changed,
    vscode.commands.registerCommand('flagos.compareWith', async (folder?: string) => {
      const active = editorAnnotations()?.active;
      if (!active) {
        void vscode.window.showInformationMessage(
          'FlagOS: profile a file or open a trace first; then compare it with another run.',
        );
        return;
      }
      let target = typeof folder === 'string' ? folder : undefined;
      let label = target ? path.basename(target) : '';
      if (!target) {
        const picked = await pickBase(sessions, labelOf);
        if (!picked) return;
        if (picked.stop) {
          comparison = undefined;
          changed.fire();
          return;
        }
        if (picked.browse) {
          const chosen = await vscode.window.showOpenDialog({
            canSelectMany: false,
            title: 'FlagOS: base trace',
          });
          target = chosen?.[0]?.fsPath;
          label = target ? path.basename(target) : '';
        } else {
          target = picked.folder;
          label = picked.label;
        }
      }
      if (!target) return;
      try {
        const opened = await openProfile(target);
        const session = opened.source.kind === 'session' ? opened.source.session?.record : undefined;
        comparison = { label, base: diffRunOf(opened.profile, analyze(opened.profile), session, label) };
        const current = currentDiff();
        changed.fire();
        if (current?.diff) {
          // A file shown as a preview: read-only, and nothing asks to be saved on exit.
          const file = path.join(os.tmpdir(), `flagos-diff-${Date.now()}.md`);
          await writeFile(file, diffMarkdown(current.diff, label, active.label), 'utf8');
          await vscode.commands.executeCommand('markdown.showPreviewToSide', vscode.Uri.file(file));
        }
      } catch (error) {
        void vscode.window.showErrorMessage(`FlagOS: ${(error as Error).message}`);
      }
    }),
  );
}
