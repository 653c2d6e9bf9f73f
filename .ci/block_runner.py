"""How .ci/driver.py runs its blocks: each a sequence of steps (commands)
that fails on the first non-zero status, alone with its output live or
beside others with a log each, every block timed (wall, and the CPU of its
steps), and every running step ended when one block fails."""
import concurrent.futures
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time


class Failed(Exception):
    pass



class Block:
    """One block's steps, its output (the terminal, or a log of its own
    when it runs beside others) and its times."""

    def __init__(self, ci, name, out=None):
        self.ci, self.name, self.out = ci, name, out
        self.outcome, self.cpu = "ok", 0.0

    def print(self, text):
        print(text, file=self.out or sys.stdout, flush=True)

    def say(self, text):
        self.print(f"ci: {text}")

    def skip(self, why):
        self.outcome = f"skipped: {why}"
        self.say(f"{self.name}: skipped: {why}")

    def step(self, what, cmd, lock=None, **kwargs):
        """Run cmd (a list, or a str for bash); a non-zero status fails the
        run.  Its CPU time (its own and its waited-for children's) counts."""
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else [str(c) for c in cmd]
        self.print(f"$ {cmd if isinstance(cmd, str) else ' '.join(argv)}")
        to = {"stdout": self.out, "stderr": subprocess.STDOUT} if self.out else {}
        with lock or contextlib.nullcontext():
            status = self.ci.wait(subprocess.Popen(argv, start_new_session=True, **to,
                                                   **kwargs), self)
        if status != 0:
            raise Failed(f"{self.name}: {what}")


class CI:
    def __init__(self, logs):
        self.logs = logs     # the side-by-side blocks' logs
        self.times = []      # (block, wall seconds, CPU seconds, outcome)
        self.running = set()  # the steps' processes, each its own group
        self.stopping = False
        self.failure = None  # the first block that failed, of those side by side
        self.lock = threading.Lock()
        # builds in the checkout (pip install ".[test]" runs Cython and
        # setuptools there) one at a time
        self.build_lock = threading.Lock()

    def wait(self, proc, block):
        with self.lock:
            self.running.add(proc)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        finally:
            with self.lock:
                self.running.discard(proc)
        block.cpu += usage.ru_utime + usage.ru_stime
        if self.stopping:
            raise Failed(f"{block.name}: stopped (another block failed)")
        return proc.returncode

    def stop(self):
        """End every running step (a block failed, or the run ends)."""
        self.stopping = True
        with self.lock:
            for proc in self.running:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)

    def _done(self, block, took):
        self.times.append((block.name, took, block.cpu, block.outcome))
        print(f"-- {block.name}: {took:.0f} s ({block.cpu:.0f} s CPU), {block.outcome}",
              flush=True)

    @contextlib.contextmanager
    def block(self, name):
        """A block on its own, its output live."""
        print(f"\n== {name}", flush=True)
        block, start = Block(self, name), time.monotonic()
        try:
            yield block
        except Failed:
            block.outcome = "FAILED"
            raise
        finally:
            self._done(block, time.monotonic() - start)

    def side_by_side(self, jobs, width=2):
        """Run the (name, function(block)) jobs ``width`` at a time, each
        with its output in .ci-logs/, shown whole when it ends.  The first
        failure stops the others; it is raised."""
        logs = self.logs
        logs.mkdir(exist_ok=True)
        print(f"\n== {', '.join(n for n, _ in jobs)}: {width} at a time, each log shown "
              "when it ends", flush=True)

        def one(name, fn):
            path = logs / (re.sub(r"[^\w.-]+", "-", name).strip("-") + ".log")
            start = time.monotonic()
            with open(path, "w") as out:
                block = Block(self, name, out)
                try:
                    if self.stopping:
                        raise Failed(f"{name}: not started (another block failed)")
                    fn(block)
                except Failed as e:
                    with self.lock:
                        first = not self.stopping
                        self.failure = self.failure or (e if first else None)
                    block.outcome = "FAILED" if first else "stopped"
                    self.stop()
                except BaseException:
                    block.outcome = "FAILED (the driver itself)"
                    self.stop()
                    raise
                finally:
                    with self.lock:
                        print(f"\n== {name}\n{path.read_text()}", end="", flush=True)
                        self._done(block, time.monotonic() - start)

        with concurrent.futures.ThreadPoolExecutor(width) as pool:
            futures = [pool.submit(one, name, fn) for name, fn in jobs]
        for fut in futures:
            fut.result()  # the driver's own errors
        if self.failure:
            raise self.failure

    def table(self):
        print("\n== time per block (wall; CPU of its steps)")
        for name, took, cpu, outcome in self.times:
            print(f"  {took:6.0f} s {cpu:6.0f} s  {name}  ({outcome})")
        print(f"  {sum(t[2] for t in self.times):13.0f} s  CPU in all", flush=True)
