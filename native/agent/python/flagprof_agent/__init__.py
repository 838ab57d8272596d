"""FlagOS Profiler capture agent: runs a Python script under the profiler and records where its time goes.

    python -m flagprof_agent --session DIR [--mode auto|kineto|agent|cpu] [--delay S] [--duration S]
                             [--progress-fd N] -- script.py [args...]

Standard library only (Python >= 3.9); torch is used when the profiled interpreter has it. DIR receives
trace.json.gz (Kineto), sites.json (exact call sites by External id), session.json (how the run went) and, in
agent mode, capture.fpc. The user's stdin, stdout and stderr are left alone: the launcher (extension/capture)
reads the child's stderr, passes it on unchanged and keeps the torch_fl tracer's lines in DIR/diagnostics.jsonl,
so those lines survive even a crash of this process. Progress goes to the --progress-fd pipe as JSON lines.
"""

__version__ = "0.1.0"
