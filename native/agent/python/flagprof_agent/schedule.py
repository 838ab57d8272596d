"""--schedule wait=W,warmup=U,active=A[,repeat=R]: torch.profiler's step schedule, counted in optimizer steps.

The profiled script does not call prof.step(): a step ends where the script's training iteration ends, at an
optimizer step (torch.optim's global post hook, the one torch's on-demand profiling counts with). The window runs
torch.profiler.profile(schedule=torch.profiler.schedule(...)) and calls its step() there, so the trace carries
torch's own ProfilerStep#N spans and torch decides, as it does for a script that calls step() itself, which steps
are waited, warmed up and recorded. Step N is torch's numbering: step 0 runs from the window's start to the end of
the first optimizer step, step N (N >= 1) from there to the end of the (N+1)-th.

repeat=0 follows torch: cycles repeat until the run ends. A cycle that the end of the run cuts short is kept, as
torch hands it to on_trace_ready at stop().

Nothing here imports torch: the agent is imported in every profiled process, before the script runs.
"""

FIELDS = ("wait", "warmup", "active", "repeat")


class ScheduleError(ValueError):
    """A schedule that cannot run: the message names the field and what it must be."""


class StepSchedule:
    def __init__(self, wait, warmup, active, repeat=0):
        self.wait = wait
        self.warmup = warmup
        self.active = active
        self.repeat = repeat

    @property
    def cycle_steps(self):
        return self.wait + self.warmup + self.active

    def recorded_steps(self, cycle):
        """(first, last) step recorded by cycle `cycle` (0-based), in torch's step numbers."""
        start = cycle * self.cycle_steps
        return start + self.wait + self.warmup, start + self.cycle_steps - 1

    def done_at(self, step):
        """Whether step `step` lies past the last cycle (never, with repeat=0)."""
        return self.repeat > 0 and step >= self.repeat * self.cycle_steps

    def torch_schedule(self, torch):
        import warnings

        with warnings.catch_warnings():
            # "Profiler won't be using warmup": warmup=0 is the user's explicit choice, not the script's warning.
            warnings.simplefilter("ignore")
            return torch.profiler.schedule(
                wait=self.wait, warmup=self.warmup, active=self.active, repeat=self.repeat
            )

    def text(self):
        return ",".join("%s=%d" % (name, getattr(self, name)) for name in FIELDS)

    def describe(self):
        return {name: getattr(self, name) for name in FIELDS}


def parse(text):
    """`wait=2,warmup=1,active=3[,repeat=R]` or `2,1,3[,R]` -> StepSchedule; ScheduleError with one line otherwise."""
    words = [word.strip() for word in str(text).split(",")]
    if not text or not str(text).strip():
        raise ScheduleError("expected wait=W,warmup=U,active=A[,repeat=R] (or W,U,A[,R]), got nothing")
    named = ["=" in word for word in words]
    if any(named) and not all(named):
        raise ScheduleError("use either wait=W,warmup=U,active=A[,repeat=R] or W,U,A[,R], not both")
    values = {}
    if all(named):
        for word in words:
            key, _, value = word.partition("=")
            key = key.strip()
            if key not in FIELDS:
                raise ScheduleError("unknown field '%s' (expected %s)" % (key[:40], ", ".join(FIELDS)))
            if key in values:
                raise ScheduleError("%s given twice" % key)
            values[key] = _count(key, value.strip())
        for key in FIELDS[:3]:
            if key not in values:
                raise ScheduleError("%s is missing (expected wait=W,warmup=U,active=A[,repeat=R])" % key)
    else:
        if not 3 <= len(words) <= 4:
            raise ScheduleError("expected 3 or 4 numbers W,U,A[,R], got %d" % len(words))
        for key, value in zip(FIELDS, words):
            values[key] = _count(key, value)
    if values["active"] < 1:
        raise ScheduleError("active must be ≥ 1")
    return StepSchedule(values["wait"], values["warmup"], values["active"], values.get("repeat", 0))


def _count(key, value):
    if not value.isdigit() or not value.isascii():
        shown = value if len(value) <= 40 else value[:40] + "…"
        raise ScheduleError("%s must be a whole number of steps ≥ 0, got '%s'" % (key, shown))
    number = int(value)
    if number > 1 << 31:
        raise ScheduleError("%s must be at most %d steps" % (key, 1 << 31))
    return number


class OptimizerSteps:
    """Calls `on_step` after each training iteration's optimizer step, from torch.optim's global post hook.

    One optimizer steps once per iteration, but a script may have several (a GAN's two, or one per parameter
    group), each stepping once per iteration: counting every step() would make a step a fraction of an iteration.
    So a step is counted at each step of the lead optimizer, the first one seen stepping. The lead is replaced by
    the next optimizer to step once it is freed (an optimizer made per epoch), or by one that steps twice while the
    lead does not (it is kept alive but no longer steps).
    """

    def __init__(self, torch, on_step):
        self.torch = torch
        self.on_step = on_step
        self.handle = None
        # (id, weak reference) of the lead optimizer.
        self.lead = None
        self.lead_name = None
        self.optimizers = set()
        self._since_lead = set()

    def install(self):
        import importlib

        # torch.optim does not keep its submodule as an attribute: the module is imported by name (torch has
        # already imported it).
        try:
            module = importlib.import_module("torch.optim.optimizer")
        except ImportError:
            return False
        register = getattr(module, "register_optimizer_step_post_hook", None)
        if register is None:
            return False
        self.handle = register(self._after_step)
        return True

    def remove(self):
        handle, self.handle = self.handle, None
        if handle is not None:
            handle.remove()

    def _after_step(self, optimizer, _args, _kwargs):
        key = id(optimizer)
        self.optimizers.add(key)
        if self.lead is None or self.lead[1]() is None or key in self._since_lead:
            self.lead = (key, _weak(optimizer))
            self.lead_name = type(optimizer).__name__
        if key != self.lead[0]:
            self._since_lead.add(key)
            return
        self._since_lead.clear()
        self.on_step()


def _weak(thing):
    import weakref

    try:
        return weakref.ref(thing)
    except TypeError:
        # An optimizer class with __slots__ and no __weakref__: it counts as alive, the two-steps rule still applies.
        return lambda: thing
