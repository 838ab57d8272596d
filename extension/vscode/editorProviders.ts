/**
 * What the editor shows of the active profile: hovers, gutter heat, inline after-text and CodeLens, each switched
 * by a setting (flagos.hover, flagos.gutterHeat, flagos.inlineText, flagos.codeLens).
 */
import * as vscode from 'vscode';
import {
  HEAT_LEVELS,
  codeLensTitle,
  findDefinitionLine,
  heatLevel,
  hoverMarkdown,
  inlineText,
} from '../analysis/lineIndex';
import { commandUri, markdownText, visibleText } from '../shared/text';
import type { DocumentAnnotations, EditorAnnotations } from './editorAnnotations';
import { baselineFor } from './compare';

const HOVER_COMMANDS = ['flagos.showLineInTimeline', 'flagos.showLineKernels', 'flagos.openProfiledLine'];

function setting(name: 'hover' | 'gutterHeat' | 'inlineText' | 'codeLens'): boolean {
  return vscode.workspace.getConfiguration('flagos').get<boolean>(name, true);
}

/**
 * Hover Markdown as data: no HTML, no theme icons, and trusted only for the extension's own commands (the links
 * hoverMarkdown builds); names from the trace never form links (see hoverMarkdown).
 */
function hoverMarkdownString(value: string): vscode.MarkdownString {
  const markdown = new vscode.MarkdownString(value, false);
  markdown.supportHtml = false;
  markdown.isTrusted = { enabledCommands: HOVER_COMMANDS };
  return markdown;
}

class HeatDecorations implements vscode.Disposable {
  private readonly levels: vscode.TextEditorDecorationType[] = [];
  private readonly stale: vscode.TextEditorDecorationType;
  private readonly inline: vscode.TextEditorDecorationType;
  private readonly staleInline: vscode.TextEditorDecorationType;
  private readonly banner: vscode.TextEditorDecorationType;

  constructor(extensionUri: vscode.Uri) {
    const icon = (name: string) => vscode.Uri.joinPath(extensionUri, 'media', 'heat', `${name}.svg`);
    for (let level = 0; level < HEAT_LEVELS; level++) {
      this.levels.push(
        vscode.window.createTextEditorDecorationType({
          light: { gutterIconPath: icon(`light-${level}`) },
          dark: { gutterIconPath: icon(`dark-${level}`) },
          gutterIconSize: 'contain',
          overviewRulerColor: new vscode.ThemeColor(`flagosProfiler.heat${level}`),
          overviewRulerLane: vscode.OverviewRulerLane.Left,
          rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
        }),
      );
    }
    this.stale = vscode.window.createTextEditorDecorationType({
      gutterIconPath: icon('stale'),
      gutterIconSize: 'contain',
    });
    this.inline = vscode.window.createTextEditorDecorationType({
      after: { color: new vscode.ThemeColor('flagosProfiler.inlineForeground'), margin: '0 0 0 2em' },
      rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
    });
    this.staleInline = vscode.window.createTextEditorDecorationType({
      after: { color: new vscode.ThemeColor('disabledForeground'), margin: '0 0 0 2em', fontStyle: 'italic' },
    });
    this.banner = vscode.window.createTextEditorDecorationType({
      after: {
        color: new vscode.ThemeColor('editorWarning.foreground'),
        margin: '0 0 0 2em',
        fontStyle: 'italic',
      },
    });
  }

  apply(editor: vscode.TextEditor, annotations: DocumentAnnotations | undefined): void {
    const heat: vscode.Range[][] = this.levels.map(() => []);
    const stale: vscode.Range[] = [];
    const inline: vscode.DecorationOptions[] = [];
    const banner: vscode.DecorationOptions[] = [];
    if (annotations) {
      const { index } = annotations.loaded;
      const dim = annotations.staleMessage !== undefined;
      const lineCount = editor.document.lineCount;
      const showHeat = setting('gutterHeat');
      const showInline = setting('inlineText');
      for (const entry of annotations.file.lines) {
        const line = annotations.currentLineOf(entry.line);
        if (line < 0 || line >= lineCount) continue;
        const range = new vscode.Range(line, 0, line, 0);
        // Heat and inline text show one quantity, the total with callees (see heatLevel).
        const level = heatLevel(index, entry);
        if (showHeat && level >= 0) (dim ? stale : heat[level]).push(range);
        if (showInline && (entry.deviceTotalNs > 0 || entry.cpuTotalNs > 0)) {
          const end = editor.document.lineAt(line).range.end;
          inline.push({
            range: new vscode.Range(end, end),
            renderOptions: {
              after: { contentText: inlineText(entry, index.hasDevice) + (dim ? ' (stale)' : '') },
            },
          });
        }
      }
      if (dim && lineCount > 0) {
        const end = editor.document.lineAt(0).range.end;
        banner.push({
          range: new vscode.Range(end, end),
          renderOptions: {
            after: { contentText: '⚠ FlagOS: the profile is older than this file; annotations are dimmed' },
          },
          hoverMessage: annotations.staleMessage
            ? new vscode.MarkdownString(markdownText(annotations.staleMessage, Infinity))
            : undefined,
        });
      }
      this.levels.forEach((type, level) => editor.setDecorations(type, heat[level]));
      editor.setDecorations(this.stale, stale);
      editor.setDecorations(dim ? this.staleInline : this.inline, inline);
      editor.setDecorations(dim ? this.inline : this.staleInline, []);
      editor.setDecorations(this.banner, banner);
      return;
    }
    for (const type of [...this.levels, this.stale, this.inline, this.staleInline, this.banner])
      editor.setDecorations(type, []);
  }

  dispose(): void {
    for (const type of [...this.levels, this.stale, this.inline, this.staleInline, this.banner])
      type.dispose();
  }
}

export function registerEditorProviders(context: vscode.ExtensionContext, state: EditorAnnotations): void {
  const decorations = new HeatDecorations(context.extensionUri);
  const codeLensChanged = new vscode.EventEmitter<void>();
  const timers = new Map<vscode.TextEditor, ReturnType<typeof setTimeout>>();

  // The latest refresh of each editor: an older one whose annotations come later must not draw over it.
  const latest = new WeakMap<vscode.TextEditor, number>();
  let refreshes = 0;
  const refresh = (editor: vscode.TextEditor, delayMs: number): void => {
    const previous = timers.get(editor);
    if (previous) clearTimeout(previous);
    timers.set(
      editor,
      setTimeout(() => {
        timers.delete(editor);
        const id = ++refreshes;
        latest.set(editor, id);
        void (async () => {
          const annotations = state.active ? await state.annotations(editor.document) : undefined;
          if (latest.get(editor) === id) decorations.apply(editor, annotations);
        })();
      }, delayMs),
    );
  };
  const refreshAll = (delayMs = 0): void => {
    for (const editor of vscode.window.visibleTextEditors) refresh(editor, delayMs);
  };

  context.subscriptions.push(
    decorations,
    codeLensChanged,
    { dispose: () => timers.forEach((t) => clearTimeout(t)) },
    state.onDidChange((uri) => {
      if (uri === undefined) refreshAll();
      else
        for (const editor of vscode.window.visibleTextEditors)
          if (editor.document.uri.toString() === uri.toString()) refresh(editor, 80);
      codeLensChanged.fire();
      state.updateStatus();
    }),
    vscode.window.onDidChangeVisibleTextEditors(() => refreshAll()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('flagos')) return;
      refreshAll();
      codeLensChanged.fire();
    }),
    vscode.languages.registerHoverProvider(
      { scheme: 'file' },
      {
        async provideHover(document, position) {
          if (!state.active || !setting('hover')) return undefined;
          const annotations = state.annotationsNow(document) ?? (await state.annotations(document));
          const entry = annotations?.entryAt(position.line);
          if (!annotations || !entry) return undefined;
          const args = { file: entry.file, line: entry.line };
          const markdown = hoverMarkdownString(
            hoverMarkdown(annotations.loaded.index, entry, {
              profileLabel: annotations.loaded.label,
              showInTimeline: commandUri('flagos.showLineInTimeline', args),
              showKernels: commandUri('flagos.showLineKernels', args),
              openLine: (file, line) => commandUri('flagos.openProfiledLine', { file, line }),
              staleMessage: annotations.staleMessage,
              baseline: baselineFor(annotations.loaded, entry.file, entry.line),
            }),
          );
          return new vscode.Hover(markdown, document.lineAt(position.line).range);
        },
      },
    ),
    vscode.languages.registerCodeLensProvider(
      { scheme: 'file' },
      {
        onDidChangeCodeLenses: codeLensChanged.event,
        async provideCodeLenses(document) {
          if (!state.active || !setting('codeLens')) return [];
          const annotations = await state.annotations(document);
          if (!annotations) return [];
          const lines: string[] = [];
          const textOf = (l: number) => (lines[l] ??= document.lineAt(l).text);
          const lenses: vscode.CodeLens[] = [];
          const used = new Set<number>();
          const stale = annotations.staleMessage !== undefined;
          for (const fn of annotations.file.functions) {
            if (fn.deviceNs <= 0 && fn.cpuNs <= 0) continue;
            let line: number;
            if (fn.function === '<module>') line = 0;
            else {
              const from = annotations.currentLineOf(fn.defLine ?? fn.firstLine);
              if (from < 0 || from >= document.lineCount) continue;
              if (fn.defLine !== undefined) line = from;
              else {
                line = findDefinitionLine(textOf, fn.function, from);
                if (line < 0) line = from;
              }
            }
            if (used.has(line)) continue;
            used.add(line);
            const prefix = fn.function === '<module>' ? 'script: ' : '';
            lenses.push(
              new vscode.CodeLens(new vscode.Range(line, 0, line, 0), {
                title: `${stale ? '$(warning) stale · ' : ''}${prefix}${codeLensTitle(fn, annotations.loaded.index.hasDevice)}`,
                tooltip: `${visibleText(fn.function)}: device and CPU time including the functions it calls (FlagOS Profiler). Click to show it in the timeline.`,
                command: 'flagos.showFunctionInTimeline',
                arguments: [{ file: fn.file, function: fn.function }],
              }),
            );
          }
          return lenses;
        },
      },
    ),
  );
}
