/**
 * Which source files are the user's own: frames of installed packages, the standard library, torch and our
 * capture agent are not, so the user's innermost own frame owns an op's time. The importer (a trace's `Call
 * stack`) and the analysis (python_function names) judge frames by this one rule.
 */
const NOT_USER_CODE =
  /(^|[\\/])(site-packages|dist-packages)[\\/]|[\\/]lib[\\/]python\d+(\.\d+)?[\\/]|^<|(^|[\\/])torch[\\/]|(^|[\\/])flagprof_agent[\\/]|^<frozen /;

/**
 * torch trims sys.path prefixes from the files it names, so the standard library arrives relative
 * ("multiprocessing/process.py", "threading.py"), looking like a user's file run from its folder. A relative path is
 * the standard library's when it is inside one of its packages, or is one of the modules that show up in traces;
 * module names a user's own script often has too (profile.py, code.py, test.py) are left as the user's.
 */
const STDLIB_PACKAGES = new Set(
  'asyncio collections concurrent ctypes curses dbm distutils email encodings ensurepip html http idlelib importlib json lib2to3 logging multiprocessing pydoc_data sqlite3 tkinter tomllib unittest urllib venv wsgiref xml xmlrpc zoneinfo'.split(
    ' ',
  ),
);
const STDLIB_MODULES = new Set(
  'abc argparse bdb contextlib copy copyreg dataclasses enum functools genericpath inspect linecache os posixpath queue runpy selectors shutil signal socket socketserver subprocess tempfile threading traceback typing warnings weakref'.split(
    ' ',
  ),
);

function isRelativeStdlib(file: string): boolean {
  if (file.startsWith('/') || /^[A-Za-z]:[\\/]/.test(file)) return false;
  const parts = file.split(/[\\/]/);
  if (parts.length > 1) return STDLIB_PACKAGES.has(parts[0]);
  return STDLIB_MODULES.has(parts[0].replace(/\.py$/, ''));
}

export function isUserFile(file: string): boolean {
  return file.length > 0 && !NOT_USER_CODE.test(file) && !isRelativeStdlib(file);
}
