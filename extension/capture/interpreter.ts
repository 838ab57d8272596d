/**
 * Which Python runs the script: an explicit path (setting or --python), then the interpreter the Python extension
 * has selected (the caller passes it in: this module does not import 'vscode'), then an environment inside the
 * workspace (.venv, venv, .conda, env: where `python -m venv`, uv, poetry and conda put them), then the Python
 * extension's python.defaultInterpreterPath, then python3 / python on PATH. The workspace's own environment comes
 * before PATH because that is the one a project's torch is installed in; the Python extension is not required.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

export type InterpreterSource =
  'setting' | 'python-extension' | 'workspace' | 'default-interpreter-path' | 'path';

export interface Interpreter {
  path: string;
  source: InterpreterSource;
}

export class InterpreterError extends Error {
  constructor(
    message: string,
    /** What the user can do about it, one sentence. */
    readonly fix: string,
  ) {
    super(message);
    this.name = 'InterpreterError';
  }
}

function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable named `name` on PATH, or undefined. */
export function whichOnPath(name: string, envPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export interface FindInterpreterOptions {
  /** flagos.pythonPath or --python; a command name (python3.11) is looked up on PATH. */
  configured?: string;
  /** The Python extension's active interpreter for the file, when that extension is installed. */
  fromPythonExtension?: () => Promise<string | undefined>;
  /** Folders whose own environments (.venv, venv, .conda, env) are candidates: the workspace folders. */
  workspaceFolders?: readonly string[];
  /** python.defaultInterpreterPath (a setting that exists without the Python extension too). */
  defaultInterpreterPath?: string;
  envPath?: string;
}

/** Where environment tools put a project's environment, relative to the project folder. */
const WORKSPACE_ENVIRONMENTS = ['.venv', 'venv', '.conda', 'env'];

function environmentPython(envDir: string): string | undefined {
  const names =
    process.platform === 'win32'
      ? [path.join(envDir, 'Scripts', 'python.exe'), path.join(envDir, 'python.exe')]
      : [path.join(envDir, 'bin', 'python3'), path.join(envDir, 'bin', 'python')];
  return names.find(isExecutable);
}

/** The interpreters of the environments inside the given folders, in folder order. */
export function workspaceInterpreters(folders: readonly string[]): string[] {
  const found: string[] = [];
  for (const folder of folders)
    for (const name of WORKSPACE_ENVIRONMENTS) {
      const python = environmentPython(path.join(folder, name));
      if (python) found.push(python);
    }
  return found;
}

function resolveCommand(command: string, envPath?: string): string | undefined {
  const resolved = command.includes(path.sep) ? path.resolve(command) : whichOnPath(command, envPath);
  return resolved && isExecutable(resolved) ? resolved : undefined;
}

/**
 * Every interpreter the user could mean, in the order findInterpreter tries them, each once: what a picker offers.
 */
export async function interpreterCandidates(options: FindInterpreterOptions = {}): Promise<Interpreter[]> {
  const candidates: Interpreter[] = [];
  const add = (file: string | undefined, source: InterpreterSource): void => {
    if (file && isExecutable(file) && !candidates.some((c) => c.path === file))
      candidates.push({ path: file, source });
  };
  const configured = options.configured?.trim();
  if (configured) add(resolveCommand(configured, options.envPath), 'setting');
  if (options.fromPythonExtension) {
    try {
      add(await options.fromPythonExtension(), 'python-extension');
    } catch {
      // The Python extension is optional.
    }
  }
  for (const python of workspaceInterpreters(options.workspaceFolders ?? [])) add(python, 'workspace');
  const fallback = options.defaultInterpreterPath?.trim();
  // 'python' is the setting's own default: it means "whatever is on PATH", found below.
  if (fallback && fallback !== 'python')
    add(resolveCommand(fallback, options.envPath), 'default-interpreter-path');
  for (const name of ['python3', 'python']) add(whichOnPath(name, options.envPath), 'path');
  return candidates;
}

export async function findInterpreter(options: FindInterpreterOptions = {}): Promise<Interpreter> {
  const configured = options.configured?.trim();
  if (configured && !resolveCommand(configured, options.envPath))
    throw new InterpreterError(
      `the configured Python interpreter '${configured}' was not found or is not executable`,
      "set flagos.pythonPath (or --python) to an existing interpreter, e.g. the project's .venv/bin/python",
    );
  const [first] = await interpreterCandidates(options);
  if (first) return first;
  throw new InterpreterError(
    'no Python interpreter found (flagos.pythonPath is empty, no interpreter is selected in the Python extension, the workspace has no .venv, venv, .conda or env, and python3 is not on PATH)',
    'install Python 3.9+ with torch, or set flagos.pythonPath to an interpreter that has torch',
  );
}

export interface InterpreterInfo {
  version: string;
  /** torch's version, or undefined when `import torch` cannot find it. */
  torch: string | undefined;
}

/**
 * Asks the interpreter for its version and whether torch is installed, without importing torch (that takes
 * seconds): the answer comes from the package metadata.
 */
export function probeInterpreter(python: string, timeoutMs = 20_000): Promise<InterpreterInfo> {
  const code = [
    'import sys, json, importlib.util',
    'spec = importlib.util.find_spec("torch")',
    'version = None',
    'if spec is not None:',
    '    try:',
    '        import importlib.metadata as m; version = m.version("torch")',
    '    except Exception:',
    '        version = "unknown"',
    'print(json.dumps({"version": "%d.%d.%d" % sys.version_info[:3], "torch": version}))',
  ].join('\n');
  return new Promise((resolve, reject) => {
    execFile(python, ['-c', code], { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) {
        const detail = (stderr || error.message).trim().split('\n').pop() ?? '';
        reject(
          new InterpreterError(
            `${python} could not be run (${detail})`,
            'choose another interpreter in flagos.pythonPath',
          ),
        );
        return;
      }
      try {
        const parsed = JSON.parse(stdout.trim().split('\n').pop() ?? '') as {
          version: string;
          torch: string | null;
        };
        resolve({ version: parsed.version, torch: parsed.torch ?? undefined });
      } catch {
        reject(
          new InterpreterError(
            `${python} did not answer as a Python interpreter`,
            'choose another interpreter in flagos.pythonPath',
          ),
        );
      }
    });
  });
}

export function noTorchFix(python: string): string {
  return `install torch into that interpreter (${python} -m pip install torch) or choose one that has it in flagos.pythonPath`;
}
