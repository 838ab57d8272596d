"""The profile on disk while the script runs: what was captured up to any moment survives a kill or a crash.

The profiler is stopped and restarted every few seconds (a segment); each segment's Kineto export is appended to
DIR/trace.json.gz as one more gzip member, its call sites go to their own sites file, and session.json then records
how many bytes of the trace are whole. A gzip file of several members reads as the concatenation of their contents,
so the members are the pieces of one Kineto JSON document:

    member 1: the first segment's header up to `"traceEvents": [`, then its events
    member k: `,` then segment k's events
    last:     TRAILER (written when the run finishes)

A run that dies leaves the trailer unwritten; whoever finds the session unsealed (the launcher when its child exits,
or the session loader) cuts the file back to session.json's whole bytes and appends TRAILER (extension/capture/
seal.ts). Every member is fsynced before session.json names it, so the recorded size never covers a member that is
only partly on disk.

Sites: segment 1 writes sites.json, segment k writes sites.k.json (each a complete version 3 document); the session
loader reads them all. External ids keep counting across profiler restarts, so they never collide.
"""

import errno
import os
import re
import zlib

# The bytes that close the document. extension/capture/seal.ts writes the same bytes: keep them equal.
TRAILER = b'\n],"traceName": "trace.json.gz"}\n'
TRACE = "trace.json.gz"
SEGMENT_EXPORT = ".segment.json.tmp"
RESERVE = ".flagprof-reserve"
# Room kept free for the end of the run (session.json, the trailer): released when the disk fills up.
RESERVE_BYTES = 1 << 20
_EVENTS = re.compile(rb'"traceEvents"\s*:\s*\[')
_COPY = 1 << 20
_EDGE = 1 << 16


def sites_name(segment):
    return "sites.json" if segment == 1 else "sites.%d.json" % segment


class DiskFull(Exception):
    """The session's file system is full (or refuses writes): profiling stops, what was written stays."""


def _is_disk_full(error):
    return isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)


class SegmentWriter:
    def __init__(self, directory, session, progress, torch_module, script, site_table=None):
        self.directory = directory
        self.session = session
        self.progress = progress
        self.torch = torch_module
        self.script = script
        self.site_table = site_table
        self.path = os.path.join(directory, TRACE)
        self.segments = 0
        self.whole_bytes = 0
        self.header_written = False
        self.has_events = False
        self.sealed = False
        self.disk_full = None
        self.sites = {"ops": 0, "withSite": 0}
        self.export_s = 0.0
        self.sites_s = 0.0
        self._reserve = os.path.join(directory, RESERVE)
        for name in (TRACE, SEGMENT_EXPORT, SEGMENT_EXPORT + ".tmp"):
            try:
                os.remove(os.path.join(directory, name))
            except OSError:
                pass
        self._hold_reserve()
        self._record()

    # -- room for the end of the run ----------------------------------------------------------------------------

    def _hold_reserve(self):
        try:
            with open(self._reserve, "wb") as f:
                f.write(b"\0" * RESERVE_BYTES)
                f.flush()
                os.fsync(f.fileno())
        except OSError:
            self._release_reserve()

    def _release_reserve(self):
        try:
            os.remove(self._reserve)
        except OSError:
            pass

    # -- one segment --------------------------------------------------------------------------------------------

    def add(self, profiler, clock):
        """Appends a stopped profiler's events and writes its call sites. Raises DiskFull (the file is cut back)."""
        if self.disk_full is not None:
            return
        number = self.segments + 1
        self.progress.emit("exporting", step="trace", segment=number)
        started = clock()
        export = os.path.join(self.directory, SEGMENT_EXPORT)
        try:
            profiler.export_chrome_trace(export)
            if not os.path.exists(export):
                raise OSError(errno.EIO, "the profiler wrote no trace")
            self._append(export)
        except BaseException as error:
            # Whatever stopped the append (a full disk, an interrupt), the file keeps only whole members.
            self._cut_back()
            if isinstance(error, Exception) and (_is_disk_full(error) or self._no_room()):
                self._out_of_room(error)
            raise
        finally:
            # torch writes the export through `<name>.tmp`: a failed export can leave either behind.
            for leftover in (export, export + ".tmp"):
                try:
                    os.remove(leftover)
                except OSError:
                    pass
        self.segments = number
        self.export_s += clock() - started
        self.progress.emit("exporting", step="sites", segment=number)
        started = clock()
        try:
            self._write_sites(profiler, number)
        except Exception as error:
            if _is_disk_full(error):
                self._out_of_room(error)
            self.session.note("finding call sites failed for segment %d: %s" % (number, error), tell=True)
        self.sites_s += clock() - started
        self._record()

    def _append(self, export):
        size = os.path.getsize(export)
        with open(export, "rb") as source:
            head = source.read(min(size, _EDGE))
            match = _EVENTS.search(head)
            if match is None:
                raise ValueError("the profiler's export has no traceEvents array")
            tail_at = max(0, size - _EDGE)
            source.seek(tail_at)
            tail = source.read()
            name = tail.rfind(b'"traceName"')
            close = tail.rfind(b"]", 0, name if name >= 0 else len(tail))
            if close < 0:
                raise ValueError("the profiler's export does not end its traceEvents array")
            events_end = tail_at + close
            compressor = zlib.compressobj(3, zlib.DEFLATED, 31)
            pending = []
            if not self.header_written:
                pending.append(compressor.compress(head[: match.end()]))
            source.seek(match.end())
            at = match.end()
            seen = False
            with open(self.path, "ab") as sink:
                while at < events_end:
                    block = source.read(min(_COPY, events_end - at))
                    if not block:
                        break
                    at += len(block)
                    if not seen:
                        block = block.lstrip()
                        if not block:
                            continue
                        seen = True
                        if self.has_events:
                            pending.append(compressor.compress(b","))
                    pending.append(compressor.compress(block))
                    if sum(len(c) for c in pending) >= _COPY:
                        sink.write(b"".join(pending))
                        pending = []
                pending.append(compressor.flush())
                sink.write(b"".join(pending))
                sink.flush()
                os.fsync(sink.fileno())
        self.header_written = True
        self.has_events = self.has_events or seen
        self.whole_bytes = os.path.getsize(self.path)

    def _write_sites(self, profiler, number):
        from .sites import collect_sites, write_sites

        sites, counts = collect_sites(profiler, self.torch, self.script, self.site_table)
        if getattr(profiler, "record_steps", False):
            for step_id in _profiler_step_ids(profiler):
                sites.pop(step_id, None)
        path = os.path.join(self.directory, sites_name(number))
        try:
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                write_sites(f, sites)
                f.flush()
                os.fsync(f.fileno())
            os.replace(path + ".tmp", path)
        except Exception:
            try:
                os.remove(path + ".tmp")
            except OSError:
                pass
            raise
        for key, value in counts.items():
            if isinstance(value, int):
                self.sites[key] = self.sites.get(key, 0) + value

    # -- the end of the run -------------------------------------------------------------------------------------

    def seal(self):
        """Writes the trailer (the trace then reads as one document) and records it."""
        self._release_reserve()
        if self.sealed:
            return
        if not self.header_written:
            # Nothing was captured: no trace file rather than an empty document.
            self._cut_back()
            try:
                os.remove(self.path)
            except OSError:
                pass
            self.sealed = True
            self._record()
            return
        try:
            with open(self.path, "ab") as sink:
                sink.write(_gzip(TRAILER))
                sink.flush()
                os.fsync(sink.fileno())
            self.whole_bytes = os.path.getsize(self.path)
            self.sealed = True
        except OSError as error:
            self._cut_back()
            self.session.note("the trace could not be closed (%s); it is closed when the session is opened" % error, tell=True)
        self._record()

    def close_files(self):
        self._release_reserve()

    # -- failures -----------------------------------------------------------------------------------------------

    def _cut_back(self):
        try:
            if os.path.exists(self.path) and os.path.getsize(self.path) > self.whole_bytes:
                os.truncate(self.path, self.whole_bytes)
        except OSError:
            pass

    def _no_room(self):
        try:
            stat = os.statvfs(self.directory)
            return stat.f_bavail * stat.f_frsize < (1 << 16)
        except OSError:
            return False

    def _out_of_room(self, error):
        self._release_reserve()
        # The profiler's own export reports a full disk in its own words (or not at all): name the cause.
        reason = os.strerror(error.errno if _is_disk_full(error) else errno.ENOSPC)
        self.disk_full = reason
        raise DiskFull(reason)

    def _record(self):
        self.session.record["trace"] = {
            "segments": self.segments,
            "wholeBytes": self.whole_bytes,
            "sealed": self.sealed,
        }
        self.session.record["sites"] = dict(self.sites, files=[sites_name(n) for n in range(1, self.segments + 1)])
        self.session.write_quietly()


def _profiler_step_ids(profiler):
    """Correlation ids of the ProfilerStep#N spans of a scheduled profiler. The agent steps torch's profiler at the
    script's line after each optimizer step, so the event tree puts each span under that line: a span is the
    profiler's own mark of a step, not that line's cost. They hang under the Python calls that run the script, never
    under an op, so the walk stops at every op."""
    results = profiler.profiler.kineto_results if profiler.profiler is not None else None
    if results is None:
        return []
    from torch._C._profiler import _EventType

    found = []
    stack = list(results.experimental_event_tree())
    while stack:
        node = stack.pop()
        try:
            if node.tag == _EventType.TorchOp:
                if node.name.startswith("ProfilerStep#"):
                    found.append(node.correlation_id)
                continue
            stack.extend(node.children)
        except Exception:
            continue  # a node torch cannot convert: its sites stay as collect_sites made them
    return found


def _gzip(data):
    compressor = zlib.compressobj(3, zlib.DEFLATED, 31)
    return compressor.compress(data) + compressor.flush()
