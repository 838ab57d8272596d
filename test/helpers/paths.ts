/** Where things are, for every test: the project root, the real traces beside it, the artifacts folder, the venv. */
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
/** ../shared/traces: third-party traces, used in place (never copied into the project). */
export const TRACES = path.resolve(ROOT, '..', 'shared', 'traces');
export const ARTIFACTS = path.join(ROOT, 'test-artifacts');
/** The project's Python with torch (scripts/setup-python.sh). */
export const PYTHON = path.join(ROOT, '.venv', 'bin', 'python');
