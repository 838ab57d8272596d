/**
 * Which frames are the user's own. Kineto's python_function names read "path/file.py(LINE): function", where LINE
 * is the function's def line; frames of installed packages, the standard library, torch and our capture agent are
 * not the user's code, so the user's innermost own frame owns the time.
 */
const NOT_USER_CODE =
  /(^|[\\/])(site-packages|dist-packages)[\\/]|[\\/]lib[\\/]python\d+(\.\d+)?[\\/]|^<|(^|[\\/])torch[\\/]|(^|[\\/])flagprof_agent[\\/]|^<frozen /;

export function isUserFile(file: string): boolean {
  return file.length > 0 && !NOT_USER_CODE.test(file);
}

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
