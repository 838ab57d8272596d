import { isUserFile } from '../import/userCode';

/**
 * Kineto's python_function names read "path/file.py(LINE): function", where LINE is the function's def line; only
 * the user's own files (import/userCode.ts) count, so the user's innermost own frame owns the time.
 */
const PYTHON_FUNCTION = /^(.*)\((\d+)\): (.*)$/;

/** The user frame a python_function slice names, or null for built-ins, library frames and other names. */
export function userFrameOfPythonFunction(
  name: string,
): { file: string; line: number; function: string } | null {
  const match = PYTHON_FUNCTION.exec(name);
  if (!match) return null;
  const file = match[1];
  if (!isUserFile(file) || !/\.py[w]?$/.test(file)) return null;
  return { file, line: Number(match[2]), function: match[3] };
}
