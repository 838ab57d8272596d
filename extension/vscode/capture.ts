/**
 * "FlagOS: Profile Current File": runs the Python file in the editor under the capture agent, streams its output
 * to the "FlagOS Profiler" Output channel, shows progress with Cancel, keeps the last N sessions in the extension's
 * storage, and hands the finished profile to whoever registered through onProfileLoaded (timeline, editor).
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as vscode from 'vscode';
import { analyzeOffThread } from '../analysis/offThread';
import { buildSummary } from '../analysis/summary';
import type { Analysis } from '../analysis/types';
import { joinArgs, splitArgs } from '../capture/args';
import { InterpreterError, noTorchFix, probeInterpreter, type Interpreter } from '../capture/interpreter';
import {
  describeSource,
  interpreterForScript,
  registerInterpreterCommands,
  selectInterpreter,
} from './interpreter';
import { pickSession, registerSessions } from './sessions';
import { registerResults, showResults } from './results';
import { registerCompare } from './compare';
import {
  CAPTURE_MODES,
  parseStepSchedule,
  ScheduleError,
  startCapture,
  type CaptureMode,
  type CaptureOptions,
  type CaptureResult,
  type CaptureRun,
  type ProgressEvent,
  type StepSchedule,
} from '../capture/launcher';
import { locateSession, openProfile, type OpenedProfile, type SessionSource } from '../capture/open';
import { createSessionDir, pruneSessions } from '../capture/sessions';
import { openRun } from '../capture/merged';
import { childFolders, rankFolders } from '../capture/ranks';
import type { SessionRecord } from '../capture/session';
import { summaryMarkdown } from '../analysis/summaryMarkdown';
import { setActiveProfile } from './editorAnnotations';
import { showTimeline } from './timeline';
import { formatDuration } from '../shared/format';

/** A finished capture: its session opened (opened.source is the session folder) and analysed. */
export type ProfileLoadedListener = (opened: OpenedProfile, analysis: Analysis) => void | Promise<void>;

const listeners = new Set<ProfileLoadedListener>();

/** Features that show a finished capture (timeline, editor annotations) register here. */
export function onProfileLoaded(listener: ProfileLoadedListener): vscode.Disposable {
  listeners.add(listener);
  return new vscode.Disposable(() => listeners.delete(listener));
}

let output: vscode.OutputChannel | undefined;
let running = false;
let currentRun: CaptureRun | undefined;

const PHASE_TEXT: Record<string, string> = {
  starting: 'starting Python',
  running: 'running the script',
  exporting: 'writing the trace',
  done: 'reading the profile',
};

function settings(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('flagos');
}

export function registerCapture(context: vscode.ExtensionContext): void {
  output = vscode.window.createOutputChannel('FlagOS Profiler');
  runProblems = vscode.languages.createDiagnosticCollection('flagos-run');
  context.subscriptions.push(runProblems);
  registerInterpreterCommands(context);
  const provider = registerSessions(context, sessionsRoot(context));
  sessions = provider;
  registerResults(context, async () => {
    const item = await pickSession(provider);
    return item && { folder: item.entry.folder, title: provider.labelOf(item.entry) };
  });
  registerCompare(
    context,
    () => provider.entries(),
    (entry) => provider.labelOf(entry),
  );
  context.subscriptions.push(
    output,
    // A window closing mid-run cancels the script the same way the Cancel button does.
    new vscode.Disposable(() => currentRun?.cancel()),
    vscode.commands.registerCommand('flagos.profileCurrentFile', (uri?: vscode.Uri) =>
      profileCurrentFile(context, uri, false),
    ),
    vscode.commands.registerCommand('flagos.profileCurrentFileWithArgs', (uri?: vscode.Uri) =>
      profileCurrentFile(context, uri, true),
    ),
    vscode.commands.registerCommand('flagos.profileCurrentFileWithTorchrun', async (uri?: vscode.Uri) => {
      const processes = await pickProcesses();
      if (processes !== undefined) await profileCurrentFile(context, uri, false, processes);
    }),
  );
}

async function pythonDocument(uri: vscode.Uri | undefined): Promise<vscode.TextDocument | undefined> {
  if (uri) return vscode.workspace.openTextDocument(uri);
  return vscode.window.activeTextEditor?.document;
}

/** Saved, on disk, Python: or a message saying what to do, and undefined. */
async function savedScript(document: vscode.TextDocument | undefined): Promise<string | undefined> {
  if (!document || (document.languageId !== 'python' && !document.fileName.endsWith('.py'))) {
    void vscode.window.showErrorMessage('FlagOS: open a Python file (.py) in the editor to profile it.');
    return undefined;
  }
  if (document.isUntitled) {
    const choice = await vscode.window.showErrorMessage(
      'FlagOS: this file has never been saved; save it as a .py file to profile it.',
      'Save As…',
    );
    if (choice) await vscode.commands.executeCommand('workbench.action.files.saveAs');
    return undefined;
  }
  if (document.isDirty) {
    const choice = await vscode.window.showWarningMessage(
      `FlagOS: ${path.basename(document.fileName)} has unsaved changes; the profile runs the file on disk.`,
      'Save and Profile',
    );
    if (choice !== 'Save and Profile' || !(await document.save())) return undefined;
  }
  return document.fileName;
}

async function interpreterFor(resource: vscode.Uri): Promise<Interpreter | undefined> {
  try {
    return await interpreterForScript(resource);
  } catch (error) {
    if (!(error instanceof InterpreterError)) throw error;
    const choice = await vscode.window.showErrorMessage(
      `FlagOS: ${error.message}. Fix: ${error.fix}.`,
      'Select Interpreter',
      'Open Settings',
    );
    if (choice === 'Open Settings')
      await vscode.commands.executeCommand('workbench.action.openSettings', 'flagos.pythonPath');
    if (choice === 'Select Interpreter') await selectInterpreter(resource);
    return undefined;
  }
}

async function scriptArguments(
  script: string,
  ask: boolean,
  context: vscode.ExtensionContext,
): Promise<string[] | undefined> {
  const configured = settings().get<string[]>('scriptArgs') ?? [];
  if (!ask) return configured;
  const key = `flagos.lastArgs:${script}`;
  const typed = await vscode.window.showInputBox({
    title: `Arguments for ${path.basename(script)}`,
    prompt: 'As on a command line; quotes group words',
    value: context.workspaceState.get<string>(key) ?? joinArgs(configured),
  });
  if (typed === undefined) return undefined;
  await context.workspaceState.update(key, typed);
  try {
    return splitArgs(typed);
  } catch (error) {
    void vscode.window.showErrorMessage(`FlagOS: ${(error as Error).message}`);
    return undefined;
  }
}

/** Where the editor's own runs are kept (the Sessions view lists them with the command line's). */
export function sessionsRoot(context: vscode.ExtensionContext): string {
  return path.join((context.storageUri ?? context.globalStorageUri).fsPath, 'sessions');
}

export async function profileCurrentFile(
  context: vscode.ExtensionContext,
  uri: vscode.Uri | undefined,
  askForArgs: boolean,
  processes = torchrunSetting(),
): Promise<void> {
  if (!vscode.workspace.isTrusted) {
    const choice = await vscode.window.showErrorMessage(
      'FlagOS: profiling runs the script, which needs Workspace Trust. Trust this workspace to profile its files.',
      'Manage Workspace Trust',
    );
    if (choice) await vscode.commands.executeCommand('workbench.trust.manage');
    return;
  }
  if (running) {
    void vscode.window.showInformationMessage(
      'FlagOS: a profile is already running; cancel it from its notification first.',
    );
    return;
  }
  const script = await savedScript(await pythonDocument(uri));
  if (!script) return;
  const interpreter = await interpreterFor(vscode.Uri.file(script));
  if (!interpreter) return;
  try {
    const info = await probeInterpreter(interpreter.path);
    if (!info.torch) {
      const choice = await vscode.window.showErrorMessage(
        `FlagOS: ${interpreter.path} (Python ${info.version}, ${describeSource(interpreter.source)}) has no torch. Fix: ${noTorchFix(interpreter.path)}.`,
        'Select Interpreter',
        'Open Settings',
      );
      if (choice === 'Select Interpreter') await selectInterpreter(vscode.Uri.file(script));
      if (choice === 'Open Settings')
        await vscode.commands.executeCommand('workbench.action.openSettings', 'flagos.pythonPath');
      return;
    }
  } catch (error) {
    const fix = error instanceof InterpreterError ? ` Fix: ${error.fix}.` : '';
    void vscode.window.showErrorMessage(`FlagOS: ${(error as Error).message}.${fix}`);
    return;
  }
  const args = await scriptArguments(script, askForArgs, context);
  if (!args) return;

  running = true;
  try {
    await runCapture(context, interpreter, script, args, processes);
  } finally {
    running = false;
  }
}

/** `flagos.profile.torchrunProcesses`: 0 or 1 runs the script as one process, N > 1 under torchrun. */
function torchrunSetting(): number {
  const n = settings().get<number>('profile.torchrunProcesses') ?? 0;
  return Number.isInteger(n) && n > 1 ? n : 1;
}

/** "single process / torchrun with N processes", asked once per run; undefined when the user backed out. */
async function pickProcesses(): Promise<number | undefined> {
  type Item = vscode.QuickPickItem & { n?: number };
  const items: Item[] = [
    { label: 'Single process', description: 'python script.py', n: 1 },
    ...[2, 4, 8].map((n) => ({
      label: `torchrun with ${n} processes`,
      description: `torchrun --nproc-per-node ${n} script.py`,
      n,
    })),
    { label: 'torchrun with…', description: 'another number of processes' },
  ];
  const picked = await vscode.window.showQuickPick(items, { placeHolder: 'How to run the script' });
  if (!picked) return undefined;
  if (picked.n !== undefined) return picked.n;
  const typed = await vscode.window.showInputBox({
    prompt: 'Processes (torchrun --nproc-per-node)',
    validateInput: (text) =>
      /^\d+$/.test(text.trim()) && Number(text) >= 1 && Number(text) <= 256
        ? undefined
        : 'a whole number from 1 to 256',
  });
  return typed === undefined ? undefined : Number(typed.trim());
}

/**
 * torchrun's command for N workers of the script: its c10d rendezvous on a free local port, so two runs never
 * collide. Every worker is profiled into SESSION/ranks/<RANK>/ and the run opens as one timeline.
 */
function torchrunLaunch(script: string, args: string[], processes: number) {
  return {
    module: 'torch.distributed.run',
    args: [
      '--nproc-per-node',
      String(processes),
      '--rdzv-backend=c10d',
      '--rdzv-endpoint=localhost:0',
      script,
      ...args,
    ],
  };
}

/** The capture's run as one notification: its phase and time, and Cancel (SIGINT, the profile so far is kept). */
function runWithProgress(
  script: string,
  options: Omit<CaptureOptions, 'onProgress'>,
  channel: vscode.OutputChannel,
): Thenable<CaptureResult> {
  return vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `FlagOS: profiling ${path.basename(script)}`,
      cancellable: true,
    },
    async (progress, token) => {
      const started = Date.now();
      let phase = 'starting';
      const report = (): void =>
        progress.report({
          message: `${PHASE_TEXT[phase] ?? phase} · ${Math.round((Date.now() - started) / 1000)} s`,
        });
      report();
      const ticker = setInterval(report, 1000);
      const run = startCapture({
        ...options,
        onProgress: (event: ProgressEvent) => {
          phase = event.phase;
          report();
        },
      });
      currentRun = run;
      const subscription = token.onCancellationRequested(() => {
        channel.appendLine(
          '■ cancelling: the script is interrupted (SIGINT) and the profile captured so far is written',
        );
        run.cancel();
      });
      try {
        return await run.done;
      } finally {
        clearInterval(ticker);
        subscription.dispose();
        currentRun = undefined;
      }
    },
  );
}

async function runCapture(
  context: vscode.ExtensionContext,
  interpreter: Interpreter,
  script: string,
  args: string[],
  processes = 1,
): Promise<void> {
  const config = settings();
  const preload = (config.get<string[]>('profile.preload') ?? []).filter((lib) => lib.trim() !== '');
  const missing = preload.find((lib) => !existsSync(lib));
  if (missing !== undefined) {
    // ld.so would only warn and the run would silently lack what the library records.
    void vscode.window.showErrorMessage(`flagos.profile.preload: ${missing}: no such file`);
    return;
  }
  let schedule: StepSchedule | undefined;
  const scheduleSetting = config.get<string>('profile.schedule') ?? '';
  try {
    schedule = scheduleSetting.trim() ? parseStepSchedule(scheduleSetting) : undefined;
  } catch (error) {
    if (!(error instanceof ScheduleError)) throw error;
    void vscode.window.showErrorMessage(`flagos.profile.schedule: ${error.message}`);
    return;
  }
  const root = sessionsRoot(context);
  const sessionDir = createSessionDir(root, script);
  pruneSessions(root, config.get<number>('keepSessions') ?? 10, sessionDir);
  const modeSetting = config.get<string>('captureMode') ?? 'auto';
  const mode: CaptureMode = (CAPTURE_MODES as readonly string[]).includes(modeSetting)
    ? (modeSetting as CaptureMode)
    : 'auto';
  // A schedule picks the recorded steps itself: the time window does not apply to it.
  const delay = schedule ? null : config.get<number | null>('profilingDelay');
  const duration = schedule ? null : config.get<number | null>('profilingDuration');
  const channel = output!;
  const launch = processes > 1 ? torchrunLaunch(script, args, processes) : { module: undefined, args };
  const command = launch.module ? ['-m', launch.module, ...launch.args] : [script, ...args];
  channel.appendLine(`▶ ${interpreter.path} ${joinArgs(command)}   (mode ${mode}; session ${sessionDir})`);
  channel.show(true);
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(script));
  const result = await runWithProgress(
    script,
    {
      python: interpreter.path,
      script,
      module: launch.module,
      args: launch.args,
      sessionDir,
      cwd: folder?.uri.fsPath ?? path.dirname(script),
      mode,
      delayS: typeof delay === 'number' && delay > 0 ? delay : undefined,
      durationS: typeof duration === 'number' && duration > 0 ? duration : undefined,
      schedule,
      flagosTrace: config.get<boolean>('trace') !== false,
      profileMemory: config.get<boolean>('profileMemory') === true,
      preload,
      stdin: 'ignore',
      unbuffered: true,
      stdout: (chunk) => channel.append(chunk.toString('utf8')),
      stderr: (chunk) => channel.append(chunk.toString('utf8')),
    },
    channel,
  );
  channel.appendLine(
    `■ exit code ${result.exitCode}${result.cancelled ? ' (cancelled)' : ''} after ${formatDuration(result.wallMs * 1e6)}`,
  );
  if (result.seal?.note) channel.appendLine(`■ ${result.seal.note}`);
  sessions?.refresh();
  await showSession(context, locateSession(sessionDir), script, result, channel);
}

type RunException = NonNullable<SessionRecord['exception']>;

/** "train.py raised RuntimeError at line 42", or "at model.py:42" when it was raised in another file. */
function raisedText(script: string, exception: RunException): string {
  const verb = exception.type === 'SyntaxError' ? 'has a syntax error' : `raised ${exception.type}`;
  const where = !exception.line
    ? ''
    : exception.file && path.resolve(exception.file) !== path.resolve(script)
      ? ` at ${path.basename(exception.file)}:${exception.line}`
      : ` at line ${exception.line}`;
  const message = exception.message ? `: ${exception.message}` : '';
  return `${path.basename(script)} ${verb}${where}${message}`;
}

/** How the run ended, in the user's words, and that its profile is kept. */
function endText(script: string, result: CaptureResult, record: SessionRecord | undefined): string {
  const name = path.basename(script);
  if (result.cancelled) {
    const window = record?.window;
    const capturedNs =
      window?.startNs !== undefined && window.endNs !== undefined
        ? Number(window.endNs - window.startNs)
        : result.wallMs * 1e6;
    return `FlagOS: Cancelled — kept the profile up to ${formatDuration(capturedNs)}.`;
  }
  if (record?.exception) return `FlagOS: ${raisedText(script, record.exception)} — profile kept.`;
  if (result.seal?.sealed)
    return `FlagOS: ${name} ended abruptly (exit code ${result.exitCode}) — kept what was written.`;
  return `FlagOS: ${name} exited with code ${result.exitCode} — profile kept.`;
}

async function askAboutEnd(
  message: string,
  exception: RunException | undefined,
  channel: vscode.OutputChannel,
  severity: 'error' | 'warning',
): Promise<void> {
  const actions = exception?.file && exception.line ? ['Go to Line', 'Show Output'] : ['Show Output'];
  const show = severity === 'error' ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
  const choice = await show(message, ...actions);
  if (choice === 'Show Output') channel.show();
  if (choice === 'Go to Line' && exception?.file && exception.line) {
    const at = new vscode.Position(exception.line - 1, Math.max(0, (exception.column ?? 1) - 1));
    await vscode.window.showTextDocument(vscode.Uri.file(exception.file), {
      selection: new vscode.Range(at, at),
    });
  }
}

let runProblems: vscode.DiagnosticCollection | undefined;
let sessions: { refresh(): void } | undefined;

/** The exception a run ended with, as a Problem at its line (replacing the previous run's). */
function showRunProblem(exception: RunException | undefined): void {
  runProblems?.clear();
  if (!runProblems || !exception?.file || !exception.line) return;
  const line = exception.line - 1;
  const start = Math.max(0, (exception.column ?? 1) - 1);
  const diagnostic = new vscode.Diagnostic(
    new vscode.Range(line, exception.column ? start : 0, line, Number.MAX_SAFE_INTEGER),
    `${exception.type}${exception.message ? `: ${exception.message}` : ''}`,
    vscode.DiagnosticSeverity.Error,
  );
  diagnostic.source = 'FlagOS profile run';
  runProblems.set(vscode.Uri.file(exception.file), [diagnostic]);
}

/** The one notification a finished run gets: how it ended and its top line, and where to look next. */
function doneText(
  script: string,
  result: CaptureResult,
  record: SessionRecord | undefined,
  summary: ReturnType<typeof buildSummary>,
): string {
  // The line whose own ops cost most (self time: a call line's total would name main() every time).
  const onDevice = summary.lines.some((line) => line.device_self_us > 0);
  const own = (line: (typeof summary.lines)[number]): number =>
    onDevice ? line.device_self_us : line.cpu_self_us;
  const top = summary.lines.reduce<(typeof summary.lines)[number] | undefined>(
    (best, line) => (!best || own(line) > own(best) ? line : best),
    undefined,
  );
  const topText = top
    ? `top line ${path.basename(top.file)}:${top.line} (${onDevice ? 'device' : 'CPU'} ${formatDuration(own(top) * 1e3)})`
    : undefined;
  if (result.exitCode !== 0)
    return [endText(script, result, record), topText && `${topText}.`].filter(Boolean).join(' ');
  return `FlagOS: ${path.basename(script)} profiled in ${formatDuration(result.wallMs * 1e6)}${topText ? `; ${topText}` : ''}.`;
}

/** Where to look next: the timeline, the summary, the line that raised. */
async function offerResults(
  context: vscode.ExtensionContext,
  session: SessionSource,
  opened: OpenedProfile,
  analysis: Analysis,
  summaryFile: string,
  message: string,
): Promise<void> {
  const exception = session.session?.record.exception;
  const actions = ['Open Timeline', 'Summary', ...(exception?.file && exception.line ? ['Go to Line'] : [])];
  const ended = exception !== undefined || !message.includes(' profiled in ');
  const show = ended ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  const choice = await show(message, ...actions);
  if (choice === 'Open Timeline') showTimeline(context, opened.profile, analysis);
  if (choice === 'Summary')
    await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(summaryFile));
  if (choice === 'Go to Line' && exception?.file && exception.line) {
    const at = new vscode.Position(exception.line - 1, Math.max(0, (exception.column ?? 1) - 1));
    await vscode.window.showTextDocument(vscode.Uri.file(exception.file), {
      selection: new vscode.Range(at, at),
    });
  }
}

/** The finished run's profile, to whoever shows it; or why there is none. */
async function showSession(
  context: vscode.ExtensionContext,
  session: SessionSource,
  script: string,
  result: CaptureResult,
  channel: vscode.OutputChannel,
): Promise<void> {
  const record = session.session?.record;
  showRunProblem(record?.exception);
  // A torchrun run has no trace of its own: its ranks' parts open as one run.
  const ranks = !session.tracePath && rankFolders(session.folder).length > 0;
  // DataLoader workers and other child processes open with the main process, one track group each.
  const multi = ranks || childFolders(session.folder).length > 0;
  if (!session.tracePath && !ranks) {
    const raised = record?.exception && raisedText(script, record.exception);
    const why =
      raised ??
      record?.notes.at(-1) ??
      `the script exited with code ${result.exitCode} before a profile was written`;
    void askAboutEnd(
      `FlagOS: no profile of ${path.basename(script)}: ${why}`,
      record?.exception,
      channel,
      'error',
    );
    return;
  }
  try {
    const opened = multi ? await openRun(session.folder) : await openProfile(session);
    const { profile } = opened;
    const analysis = await analyzeOffThread(profile);
    const label = `${path.basename(script)} · ${new Date().toLocaleTimeString()}`;
    setActiveProfile(profile, analysis, label);
    for (const listener of listeners) await listener(opened, analysis);
    // Once, for the summary file, the notification and the Results view alike.
    const summary = buildSummary(analysis, { steps: true, memory: true });
    const markdown = summaryMarkdown(summary, {
      script,
      sessionDir: session.folder,
      exitCode: result.exitCode,
      mode: record?.mode?.chosen,
      modeReason: record?.mode?.reason,
      notes: record?.notes,
    });
    // A file in the session folder, shown as a preview: read-only, and nothing asks to be saved on exit.
    const summaryFile = path.join(session.folder, 'summary.md');
    await writeFile(summaryFile, markdown, 'utf8');
    showResults(context, {
      opened,
      analysis,
      facts: {
        title: label,
        source: session.folder,
        session: record,
        wallMs: result.wallMs,
        cancelled: result.cancelled,
        canShowOutput: true,
      },
      summary,
      onShowOutput: () => channel.show(),
    });
    void offerResults(
      context,
      session,
      opened,
      analysis,
      summaryFile,
      doneText(script, result, record, summary),
    );
  } catch (error) {
    void vscode.window.showErrorMessage(`FlagOS: ${(error as Error).message}`);
  }
}
