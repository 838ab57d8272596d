/** The subcommand table: one line per command; each module owns its parsing (node:util parseArgs). */
import { summaryCommand } from './summary';
import { baselineCommand } from './baseline';
import { checkCommand } from './check';
import { diagnosticsCommand } from './diagnostics';
import { reportCommand } from './report';
import { profileCommand } from './profile';
import { decodeCommand } from './decode';
import { diffCommand, DIFF_HELP } from './diff';
import { exportCommand, EXPORT_HELP } from './export';

export interface CliCommand {
  /** One line for `flagprof --help`. */
  readonly synopsis: string;
  run(argv: string[]): Promise<number>;
}

export const COMMANDS: Record<string, CliCommand> = {
  summary: summaryCommand,
  check: checkCommand,
  diagnostics: diagnosticsCommand,
  baseline: baselineCommand,
  report: reportCommand,
  profile: profileCommand,
  decode: decodeCommand,
  diff: diffCommand,
  export: exportCommand,
};

const TRACE_INPUT =
  'TRACE is a Kineto trace (.json or .json.gz), a pipe, a FIFO or - (stdin); SESSION a folder written by flagprof profile.';

/** What `flagprof COMMAND --help` prints: the usage line, what the command does, its options. */
export const HELP: Record<string, string> = {
  summary: `usage: flagprof summary TRACE|SESSION|FOLDER [--json] [--top N] [--ranks]

Ops, kernels and source lines by device time (by CPU time when the profile has no device activity); a Steps
table when the trace has ProfilerStep#N spans, a Memory section when it recorded allocations (profile --memory).
${TRACE_INPUT}
FOLDER holds one Kineto trace per rank (*.json, *.json.gz; the rank from distributedInfo.rank, else the file name).

options:
  --json       the summary as JSON
  --top N      rows per table (default 15)
  --ranks      the ranks side by side: exposed communication, stragglers, the most waited-for collectives
  -h, --help   this help
`,
  check: `usage: flagprof check TRACE|SESSION [--baseline FILE] [--platform NAME] [--json | --markdown]

Structural parity checks of a trace against a baseline; exit 1 when a required check fails.
${TRACE_INPUT}

options:
  --baseline FILE   a baseline written by flagprof baseline, or upstream profiler_cuda_baseline.json
                    (default: the torch-cuda baseline shipped with flagprof)
  --platform NAME   the row of the capability table: cuda, metax, ppu, musa, dcu, ascend, gcu, other
                    (default: detected from the trace)
  --json            the report as JSON
  --markdown        the report as Markdown
  -h, --help        this help
`,
  diagnostics: `usage: flagprof diagnostics SESSION|LOG [--json] [--all]

The FLAGOS_TRACE lines of a session folder (diagnostics.jsonl) or of a log, as structured diagnostics.

options:
  --json       the diagnostics as JSON
  --all        include debug lines
  -h, --help   this help
`,
  baseline: `usage: flagprof baseline TRACE... --out FILE

Derives a structural baseline (categories, args keys) from traces you trust, for flagprof check --baseline.
${TRACE_INPUT}

options:
  --out FILE   where to write the baseline (JSON)
  -h, --help   this help
`,
  report: `usage: flagprof report TRACE|SESSION|FOLDER --out FILE.html

The timeline as one self-contained HTML file (it loads nothing from elsewhere). A run of several processes (a
torchrun session, a folder of rank traces) is one timeline with a track group per rank, on their own clocks.
${TRACE_INPUT}

options:
  -o, --out FILE   where to write the report
  -h, --help       this help
`,
  profile: `usage: flagprof profile [options] [--] script.py [args...]

Runs a Python script under the profiler, then prints the summary and the session folder. The exit code is the
script's. Everything after the script's name is the script's own arguments.

options:
  --out DIR            the session folder (default: a new folder under .flagprof/sessions)
  --python PY          the interpreter (default: FLAGPROF_PYTHON, else python3 / python on PATH)
  --mode M             auto, kineto, agent or cpu (default auto)
  --delay S            seconds before profiling begins (default: from the start)
  --duration S         seconds of profiling (default: until the script ends)
  --schedule W,U,A[,R] record the steps torch.profiler's schedule(wait, warmup, active, repeat) picks; a step
                       ends at each optimizer step (also wait=W,warmup=U,active=A[,repeat=R]; not with
                       --delay/--duration)
  --memory             record allocations and frees (torch profile_memory): a Memory section in the summary
  --keep N             sessions kept under .flagprof/sessions (default 10)
  --top N              rows per table of the summary (default 15)
  --json               the summary as JSON on stdout (the script's output moves to stderr)
  --no-flagos-trace    run without FLAGOS_TRACE=1
  -h, --help           this help
`,
  decode: `usage: flagprof decode CAPTURE.fpc [--json]

The device events, counts and diagnostics of an agent-mode capture (a session's capture.fpc).

options:
  --json       the capture as JSON
  -h, --help   this help
`,
  // Each module owns its help text, beside its options.
  diff: DIFF_HELP,
  export: EXPORT_HELP,
};

export function usage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  flagprof ${c.synopsis}`);
  return `usage:\n${lines.join('\n')}\n`;
}

/** `flagprof --help`: the commands, where to read more, and the limits an import runs under. */
export function fullHelp(): string {
  return `${usage()}
flagprof COMMAND --help shows a command's options.

environment:
  FLAGPROF_MAX_TRACE_BYTES   most trace text one import reads, counted after decompression (as 8G;
                             default: 40% of the memory available)
  FLAGPROF_MAX_EVENTS        most events one import reads (as 50M; default: one per 275 bytes available)
  FLAGPROF_MAX_VALUE_BYTES   longest single event, key or top-level field held whole (default 64M)
  FLAGPROF_MAX_MEMORY        most memory one import may grow by (default: half the memory available)
  FLAGPROF_DEBUG             print the stack of an internal error
`;
}
