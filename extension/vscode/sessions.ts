/**
 * The Sessions view (FlagOS activity bar): every profile run of the workspace, newest first — the editor's own runs
 * (kept in the extension's storage) and the command line's (`.flagprof/sessions` in each workspace folder) — with
 * script, time, mode and how it ended. Open one as a timeline, annotate the editor with it, rename it (the name is
 * kept in the workspace state: session folders are the agent's record and are not rewritten), reveal or delete it.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { analyzeOffThread } from '../analysis/offThread';
import { openRun } from '../capture/merged';
import { runPartsText } from '../capture/ranks';
import { readSessionFile, type SessionRecord } from '../capture/session';
import { listSessions } from '../capture/sessions';
import { setActiveProfile } from './editorAnnotations';
import { openTrace } from './traceCommands';

const LABELS_KEY = 'flagos.sessionLabels';

export interface SessionEntry {
  folder: string;
  script: string;
  /** When the run started (from session.json, else the folder's name). */
  started: Date | undefined;
  record: SessionRecord | undefined;
  /** From the editor's own runs or the command line's. */
  origin: 'editor' | 'cli';
}

/** yyyymmdd-hhmmss-mmm-<script>: the name createSessionDir gives a folder. */
function startedFromName(folder: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-(\d{3})-/.exec(path.basename(folder));
  if (!match) return undefined;
  const [y, mo, d, h, mi, s, ms] = match.slice(1).map(Number);
  return new Date(y, mo - 1, d, h, mi, s, ms);
}

function entryOf(folder: string, origin: SessionEntry['origin']): SessionEntry {
  const file = readSessionFile(folder);
  const startedAt = file?.document.startedAt;
  const parsed = typeof startedAt === 'string' ? new Date(startedAt) : undefined;
  const started = parsed && !Number.isNaN(parsed.getTime()) ? parsed : startedFromName(folder);
  const script = file?.record.script ?? path.basename(folder).replace(/^\d{8}-\d{6}-\d{3}-/, '') + '.py';
  return { folder, script, started, record: file?.record, origin };
}

/** How the run ended, in a few words. */
export function outcomeText(record: SessionRecord | undefined): string {
  if (!record) return 'no session.json';
  if (record.exception) return `raised ${record.exception.type}`;
  switch (record.status) {
    case 'running':
    case 'starting':
      return 'running';
    case 'interrupted':
      return 'cancelled';
    case 'lost':
      return `ended abruptly (exit ${record.exitCode ?? '?'})`;
    default:
      return record.exitCode === undefined ? (record.status ?? 'unknown') : `exit ${record.exitCode}`;
  }
}

function timeText(date: Date | undefined): string {
  if (!date) return '';
  const today = new Date();
  const sameDay = date.toDateString() === today.toDateString();
  const hm = date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return sameDay ? hm : `${date.toLocaleDateString()} ${hm}`;
}

class SessionItem extends vscode.TreeItem {
  constructor(
    readonly entry: SessionEntry,
    label: string | undefined,
  ) {
    super(label ?? `${path.basename(entry.script)} · ${timeText(entry.started)}`);
    const mode = entry.record?.mode?.chosen;
    const parts = runPartsText(entry.folder);
    this.description = [label ? timeText(entry.started) : undefined, mode, parts, outcomeText(entry.record)]
      .filter(Boolean)
      .join(' · ');
    const failed = Boolean(entry.record?.exception) || entry.record?.status === 'lost';
    this.iconPath = new vscode.ThemeIcon(failed ? 'warning' : entry.origin === 'cli' ? 'terminal' : 'flame');
    this.tooltip = new vscode.MarkdownString(
      [
        `**${path.basename(entry.script)}** — ${outcomeText(entry.record)}`,
        entry.record?.mode?.reason ? `mode ${mode}: ${entry.record.mode.reason}` : undefined,
        entry.record?.exception?.message,
        parts ? `${parts}, each a track group of the timeline` : undefined,
        `${entry.origin === 'cli' ? 'command line run' : 'run from the editor'}: \`${entry.folder}\``,
      ]
        .filter(Boolean)
        .join('\n\n'),
    );
    this.contextValue = 'flagosSession';
    this.resourceUri = vscode.Uri.file(entry.folder);
    this.command = {
      command: 'flagos.showResults',
      title: 'Show Results',
      arguments: [entry.folder, label ?? `${path.basename(entry.script)} · ${timeText(entry.started)}`],
    };
  }
}

export class SessionsProvider implements vscode.TreeDataProvider<SessionItem> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly editorRoot: string,
  ) {}

  refresh(): void {
    this.changed.fire();
  }

  labels(): Record<string, string> {
    return this.context.workspaceState.get<Record<string, string>>(LABELS_KEY) ?? {};
  }

  async setLabel(folder: string, label: string | undefined): Promise<void> {
    const labels = { ...this.labels() };
    if (label) labels[folder] = label;
    else delete labels[folder];
    await this.context.workspaceState.update(LABELS_KEY, labels);
    this.refresh();
  }

  entries(): SessionEntry[] {
    const entries = listSessions(this.editorRoot).map((folder) => entryOf(folder, 'editor'));
    for (const folder of vscode.workspace.workspaceFolders ?? [])
      for (const dir of listSessions(path.join(folder.uri.fsPath, '.flagprof', 'sessions')))
        entries.push(entryOf(dir, 'cli'));
    return entries.sort((a, b) => (b.started?.getTime() ?? 0) - (a.started?.getTime() ?? 0));
  }

  getTreeItem(item: SessionItem): SessionItem {
    return item;
  }

  getChildren(item?: SessionItem): SessionItem[] {
    if (item) return [];
    const labels = this.labels();
    return this.entries().map((entry) => new SessionItem(entry, labels[entry.folder]));
  }

  labelOf(entry: SessionEntry): string {
    return this.labels()[entry.folder] ?? `${path.basename(entry.script)} · ${timeText(entry.started)}`;
  }
}

export async function pickSession(provider: SessionsProvider): Promise<SessionItem | undefined> {
  const items = provider.getChildren();
  const picked = await vscode.window.showQuickPick(
    items.map((item) => ({
      label: String(item.label),
      description: String(item.description ?? ''),
      item,
    })),
    { title: 'FlagOS: sessions, newest first' },
  );
  return picked?.item;
}

export function registerSessions(context: vscode.ExtensionContext, editorRoot: string): SessionsProvider {
  const provider = new SessionsProvider(context, editorRoot);
  const target = async (item?: SessionItem): Promise<SessionItem | undefined> =>
    item instanceof SessionItem ? item : pickSession(provider);
  context.subscriptions.push(
    vscode.window.registerTreeDataProvider('flagos.sessions', provider),
    vscode.commands.registerCommand('flagos.sessions.refresh', () => provider.refresh()),
    vscode.commands.registerCommand('flagos.sessions.open', async (item?: SessionItem) => {
      const chosen = await target(item);
      if (chosen) await openTrace(context, chosen.entry.folder, provider.labelOf(chosen.entry));
    }),
    vscode.commands.registerCommand('flagos.sessions.annotate', async (item?: SessionItem) => {
      const chosen = await target(item);
      if (!chosen) return;
      try {
        const { profile } = await openRun(chosen.entry.folder);
        setActiveProfile(profile, await analyzeOffThread(profile), provider.labelOf(chosen.entry));
      } catch (error) {
        void vscode.window.showErrorMessage(`FlagOS: ${(error as Error).message}`);
      }
    }),
    vscode.commands.registerCommand('flagos.sessions.compare', async (item?: SessionItem) => {
      const chosen = await target(item);
      if (chosen) await vscode.commands.executeCommand('flagos.compareWith', chosen.entry.folder);
    }),
    vscode.commands.registerCommand('flagos.sessions.rename', async (item?: SessionItem) => {
      const chosen = await target(item);
      if (!chosen) return;
      const label = await vscode.window.showInputBox({
        title: 'FlagOS: name this session',
        value: provider.labelOf(chosen.entry),
        prompt: 'Empty: back to the script name and time',
      });
      if (label !== undefined) await provider.setLabel(chosen.entry.folder, label.trim() || undefined);
    }),
    vscode.commands.registerCommand('flagos.sessions.reveal', async (item?: SessionItem) => {
      const chosen = await target(item);
      if (chosen)
        await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(chosen.entry.folder));
    }),
    vscode.commands.registerCommand('flagos.sessions.delete', async (item?: SessionItem) => {
      const chosen = await target(item);
      if (!chosen) return;
      const answer = await vscode.window.showWarningMessage(
        `FlagOS: delete the session ${provider.labelOf(chosen.entry)}? Its trace and capture are removed from disk.`,
        { modal: true },
        'Delete',
      );
      if (answer !== 'Delete') return;
      rmSync(chosen.entry.folder, { recursive: true, force: true });
      await provider.setLabel(chosen.entry.folder, undefined);
    }),
  );
  return provider;
}
