"""Progress reports as JSON lines on a pipe the launcher passes by file descriptor (never stdout: that is the user's)."""

import json
import os
import time


class Progress:
    def __init__(self, fd):
        self._stream = None
        self._t0 = time.monotonic()
        if fd is None:
            return
        try:
            # The user's subprocesses must not inherit the launcher's pipe.
            os.set_inheritable(fd, False)
            self._stream = os.fdopen(fd, "w", buffering=1, encoding="utf-8", closefd=True)
        except OSError:
            self._stream = None

    def emit(self, phase, **fields):
        if self._stream is None:
            return
        record = {"phase": phase, "elapsedS": round(time.monotonic() - self._t0, 3)}
        record.update(fields)
        try:
            self._stream.write(json.dumps(record) + "\n")
        except (OSError, ValueError):
            # The launcher went away; profiling goes on without progress reports.
            self._stream = None

    def close(self):
        if self._stream is not None:
            try:
                self._stream.close()
            except OSError:
                pass
            self._stream = None
