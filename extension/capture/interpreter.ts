/**
 * Which Python runs the script: an explicit path (setting or --python), then the interpreter the Python extension
 * has selected (the caller passes it in: this module does not import 'vscode'), then python3 / python on PATH.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

export type InterpreterSource = 'setting' | 'python-extension' | 'path';

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
  envPath?: string;
}

export async function findInterpreter(options: FindInterpreterOptions = {}): Promise<Interpreter> {
  const configured = options.configured?.trim();
  if (configured) {
    const resolved = configured.includes(path.sep)
      ? path.resolve(configured)
      : whichOnPath(configured, options.envPath);
    if (resolved && isExecutable(resolved)) return { path: resolved, source: 'setting' };
    throw new InterpreterError(
      `the configured Python interpreter '${configured}' was not found or is not executable`,
      "set flagos.pythonPath (or --python) to an existing interpreter, e.g. the project's .venv/bin/python",
    );
  }
  if (options.fromPythonExtension) {
    try {
      const selected = await options.fromPythonExtension();
      if (selected && isExecutable(selected)) return { path: selected, source: 'python-extension' };
    } catch {
      // The Python extension is optional; fall through to PATH.
    }
  }
  for (const name of ['python3', 'python']) {
    const found = whichOnPath(name, options.envPath);
    if (found) return { path: found, source: 'path' };
  }
  throw new InterpreterError(
    'no Python interpreter found (flagos.pythonPath is empty, no interpreter is selected in the Python extension, and python3 is not on PATH)',
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
