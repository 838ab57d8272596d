/**
 * Which interpreter runs a profile, in VS Code: the lookup of capture/interpreter.ts fed with what only the editor
 * knows (the Python extension's choice, the workspace folders, python.defaultInterpreterPath), and
 * "FlagOS: Select Python Interpreter", a picker that works without the Python extension and shows which candidates
 * have torch (probed from package metadata, so the picker opens in well under a second per candidate).
 */
import path from 'node:path';
import * as vscode from 'vscode';
import {
  findInterpreter,
  interpreterCandidates,
  probeInterpreter,
  type FindInterpreterOptions,
  type Interpreter,
  type InterpreterSource,
} from '../capture/interpreter';

const SOURCE_TEXT: Record<InterpreterSource, string> = {
  setting: 'flagos.pythonPath',
  'python-extension': 'selected in the Python extension',
  workspace: "the workspace's environment",
  'default-interpreter-path': 'python.defaultInterpreterPath',
  path: 'on PATH',
};

export function describeSource(source: InterpreterSource): string {
  return SOURCE_TEXT[source];
}

async function activeInterpreterOfPythonExtension(resource: vscode.Uri): Promise<string | undefined> {
  if (!vscode.extensions.getExtension('ms-python.python')) return undefined;
  const { PythonExtension } = await import('@vscode/python-extension');
  const api = await PythonExtension.api();
  const environmentPath = api.environments.getActiveEnvironmentPath(resource);
  const resolved = await api.environments.resolveEnvironment(environmentPath);
  return resolved?.executable.uri?.fsPath ?? environmentPath.path;
}

/** The resource's own workspace folder first, then the others. */
function workspaceFolders(resource: vscode.Uri | undefined): string[] {
  const own = resource ? vscode.workspace.getWorkspaceFolder(resource)?.uri.fsPath : undefined;
  const all = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
  return own ? [own, ...all.filter((folder) => folder !== own)] : all;
}

function lookupOptions(resource: vscode.Uri | undefined): FindInterpreterOptions {
  return {
    configured: vscode.workspace.getConfiguration('flagos', resource).get<string>('pythonPath'),
    fromPythonExtension: resource ? () => activeInterpreterOfPythonExtension(resource) : undefined,
    workspaceFolders: workspaceFolders(resource),
    defaultInterpreterPath: vscode.workspace
      .getConfiguration('python', resource)
      .get<string>('defaultInterpreterPath'),
  };
}

/** The interpreter for a script (throws InterpreterError when there is none). */
export function interpreterForScript(resource: vscode.Uri): Promise<Interpreter> {
  return findInterpreter(lookupOptions(resource));
}

interface CandidateItem extends vscode.QuickPickItem {
  python?: string;
  browse?: boolean;
}

function displayPath(file: string, resource: vscode.Uri | undefined): string {
  const folder = resource ? vscode.workspace.getWorkspaceFolder(resource)?.uri.fsPath : undefined;
  return folder && file.startsWith(folder + path.sep) ? path.relative(folder, file) : file;
}

async function candidateItems(resource: vscode.Uri | undefined): Promise<CandidateItem[]> {
  const options = lookupOptions(resource);
  // The setting itself is shown as the current choice, not as a candidate to pick again.
  const candidates = await interpreterCandidates(options);
  const probed = await Promise.all(
    candidates.map((candidate) =>
      probeInterpreter(candidate.path, 10_000).then(
        (info) => ({ candidate, info }),
        () => ({ candidate, info: undefined }),
      ),
    ),
  );
  const items: CandidateItem[] = probed.map(({ candidate, info }) => ({
    label: displayPath(candidate.path, resource),
    description: info
      ? `Python ${info.version} · ${info.torch ? `torch ${info.torch}` : 'no torch'}`
      : 'could not be run',
    detail: describeSource(candidate.source),
    python: candidate.path,
  }));
  // Interpreters with torch first: those are the ones that can profile.
  items.sort(
    (a, b) => Number(!a.description?.includes('torch ')) - Number(!b.description?.includes('torch ')),
  );
  items.push({ label: 'Enter interpreter path…', browse: true, alwaysShow: true });
  return items;
}

/** "FlagOS: Select Python Interpreter": saves the choice in flagos.pythonPath for the script's workspace folder. */
export async function selectInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
  resource ??= vscode.window.activeTextEditor?.document.uri;
  const picked = await vscode.window.showQuickPick(candidateItems(resource), {
    title: 'FlagOS: Python interpreter for profiling',
    placeHolder: 'Interpreters of this workspace, the Python extension and PATH (those with torch first)',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!picked) return undefined;
  let python = picked.python;
  if (picked.browse) {
    const chosen = await vscode.window.showOpenDialog({
      title: 'FlagOS: choose a Python interpreter',
      canSelectMany: false,
      openLabel: 'Use for profiling',
    });
    python = chosen?.[0]?.fsPath;
  }
  if (!python) return undefined;
  const folder = resource ? vscode.workspace.getWorkspaceFolder(resource) : undefined;
  const configuration = vscode.workspace.getConfiguration('flagos', folder?.uri ?? resource);
  await configuration.update(
    'pythonPath',
    python,
    folder ? vscode.ConfigurationTarget.WorkspaceFolder : vscode.ConfigurationTarget.Global,
  );
  void vscode.window.showInformationMessage(`FlagOS: profiles now run with ${python}.`);
  return python;
}

export function registerInterpreterCommands(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('flagos.selectInterpreter', (uri?: vscode.Uri) => selectInterpreter(uri)),
  );
}
