"""Kernels forked from a warm worker: the interpreter start and the imports every page makes, paid once per
worker instead of once per page (issue #34).

A page run by papermill starts a kernel (a new interpreter that imports ipykernel) and then imports pandas,
matplotlib and lgacc: about 2 s of every re-executed page.  Here the runner's worker imports them once
(:func:`warm_up`, the modules the notebooks themselves import), and each page runs in a process forked from it
(:func:`call_forked`).  That process forks the page's kernel first, before anything else happens in it, and
then runs papermill as usual, with a kernel manager (:func:`kernel_manager_class`) whose "launch" hands the
connection file to the forked kernel instead of starting an interpreter.  The kernel is ipykernel's own
application, as ``python -m ipykernel_launcher -f FILE`` runs it, so the pages' outputs are those of the
normal kernel; each page still has its own process (its own namespace, matplotlib settings and lgacc state,
forked from a worker that never runs a notebook's code).

Any start-up problem falls back to the normal kernel: a kernel spec that is not ipykernel on this very
interpreter (``--kernel`` names another one, or its spec sets variables), a fork that fails, or a forked
kernel that does not come up.

Either kernel talks to papermill over local TCP sockets encrypted with CurveZMQ keys the kernel manager provisions
(:func:`encrypted`: jupyter_client's ``transport_encryption="auto"``, for a kernel spec that declares
``supported_encryption: curve``, as ipykernel's does), not in plain text that any local user could read (and
ipykernel's warning that it is, printed once a page, goes away).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import os
import pickle
import signal
import struct
import sys
from pathlib import Path
from typing import Callable, Iterable

__all__ = ["WARM_PACKAGES", "notebook_imports", "fresh_image", "warm_up", "call_forked", "kernel_manager_class", "warm_command",
           "encrypted"]

#: The packages whose modules a worker imports ahead of the pages, when a notebook imports them: the ones that
#: neither look for IPython nor change global state when imported (``matplotlib_inline``'s backend must be imported
#: inside the kernel, where it registers its hooks).
WARM_PACKAGES = ("lgacc", "numpy", "pandas", "matplotlib", "sympy", "scipy", "yaml")
#: What the kernel itself imports (``ipykernel_launcher`` runs :mod:`ipykernel.kernelapp`).
KERNEL_MODULES = ("ipykernel.kernelapp", "ipykernel.ipkernel", "IPython.display")
#: Never imported ahead: a module that decides at import time whether it runs under IPython.
NEVER_WARM = ("matplotlib_inline", "tqdm", "ipywidgets")
#: Seconds the page's process waits for its forked kernel to answer before it starts a normal one instead.
KERNEL_READY_S = 30.0
PR_SET_PDEATHSIG = 1


def notebook_imports(notebooks: Iterable[Path]) -> tuple[str, ...]:
    """The modules of :data:`WARM_PACKAGES` the notebooks' code cells import (``import a.b``, ``from a.b import c``),
    sorted; a cell that is not plain Python (a magic) or a notebook that cannot be read is skipped."""
    import nbformat

    found = set()
    for notebook in notebooks:
        try:
            cells = nbformat.read(notebook, as_version=4).cells
        except Exception:  # noqa: BLE001 - the runner reports an unreadable notebook itself
            continue
        for cell in cells:
            if cell.cell_type != "code":
                continue
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    found.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module)
    return tuple(sorted(name for name in found if _warmable(name)))


def _warmable(name: str) -> bool:
    top = name.split(".")[0]
    return top in WARM_PACKAGES and not any(name == n or name.startswith(n + ".") for n in NEVER_WARM)


_FIRST_WARM_UP: dict = {}  # per process (each worker is forked): whether it was a fresh image at its first warm-up


def fresh_image() -> bool:
    """Whether this process holds no setting a fresh interpreter would not: matplotlib not imported (its backend is
    chosen at import, and its rcParams may have been changed), no IPython shell, pandas' options (if imported) at
    their defaults.  The runner imports pandas (the findings' placeholders) but changes none of them; a test session
    that calls the runner in-process may have changed anything."""
    if "matplotlib" in sys.modules:
        return False
    ipython = sys.modules.get("IPython")
    if ipython is not None and getattr(ipython, "get_ipython", lambda: None)() is not None:
        return False
    pandas = sys.modules.get("pandas")
    if pandas is None:
        return True
    try:
        import warnings

        from pandas._config import config

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return all(_same(pandas.get_option(key), option.defval) for key, option in config._registered_options.items())
    except Exception:  # noqa: BLE001 - pandas' internals moved: no warm kernel rather than a doubtful one
        return False


def _same(value, default) -> bool:
    try:
        return bool(value == default) or value is default
    except Exception:  # noqa: BLE001 - values that do not compare
        return value is default


def warm_up(modules: Iterable[str]) -> bool:
    """Import the kernel's modules and ``modules`` into this process (a runner's worker); ``False`` when it is no image
    to fork kernels from (:func:`fresh_image` was false at its first warm-up): a page forked from it could see the
    settings of the process that started the runner.

    A module that fails to import is left to the page that imports it, which reports the error in its own kernel.
    matplotlib reads its backend from ``MPLBACKEND`` when it is imported; the kernel sets it to the inline backend
    when it starts (if unset), before a page imports matplotlib: it is set here the same way."""
    if "fresh" not in _FIRST_WARM_UP:
        _FIRST_WARM_UP["fresh"] = fresh_image()
    if not _FIRST_WARM_UP["fresh"]:
        return False
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    for name in (*KERNEL_MODULES, *modules):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - any import error is the page's to report
            pass
    return True


def warm_command(cmd: list[str]) -> list[str] | None:
    """The arguments of ipykernel's application if ``cmd`` starts it on this interpreter
    (``<this python> [-X...] -m ipykernel_launcher ARGS``), else ``None``."""
    if not cmd or os.path.abspath(cmd[0]) != os.path.abspath(sys.executable):
        return None
    rest = list(cmd[1:])
    while rest and rest[0].startswith("-X"):  # interpreter options (frozen modules, for the debugger)
        rest.pop(0)
    if rest[:2] != ["-m", "ipykernel_launcher"]:
        return None
    return rest[2:]


# --- the page's process -------------------------------------------------------------------------------


def call_forked(function: Callable, *args, **kwargs):
    """``function(*args, **kwargs, kernel_manager_class=...)`` in a forked child of this (warm) process, with a
    kernel forked from that child before anything runs in it; its result (pickled) is returned here.

    Raises :class:`OSError` if the fork fails (the caller runs the page as before).  A child that dies without
    a result (killed) raises :class:`ChildProcessError`."""
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the page's process
        code = 1
        try:
            os.close(read_fd)
            _die_with_parent(signal.SIGKILL)
            if os.getppid() != parent:  # the worker died before the signal was set
                os._exit(1)
            kernel = _ForkedKernel.fork()
            try:
                result = function(*args, **kwargs, kernel_manager_class=kernel_manager_class(kernel))
            finally:
                kernel.release()
            _write_all(write_fd, pickle.dumps(result))
            code = 0
        except BaseException:  # noqa: BLE001 - the parent reports a process that ends without a result
            pass
        finally:
            os._exit(code)
    os.close(write_fd)
    try:
        data = _read_all(read_fd)
    finally:
        os.close(read_fd)
        _reap(pid)
    if not data:
        raise ChildProcessError("the page's process ended without a result")
    return pickle.loads(data)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _die_with_parent(signum: int) -> None:
    """Linux's parent-death signal: this process gets ``signum`` when its parent dies."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum)


def _write_all(fd: int, data: bytes) -> None:
    data = struct.pack("<Q", len(data)) + data
    while data:
        data = data[os.write(fd, data):]


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    data = b"".join(chunks)
    if len(data) < 8 or struct.unpack("<Q", data[:8])[0] != len(data) - 8:
        return b""
    return data[8:]


class _ForkedKernel:
    """A process forked from the page's process before anything ran in it, waiting for its connection file.

    :meth:`start` sends it the kernel's arguments, working directory and environment; it answers once ipykernel's
    application is initialised (its sockets bound), or with the error that stopped it."""

    def __init__(self, pid: int, order_fd: int, answer_fd: int):
        self.pid, self.order_fd, self.answer_fd = pid, order_fd, answer_fd

    @classmethod
    def fork(cls) -> "_ForkedKernel":
        order_read, order_write = os.pipe()
        answer_read, answer_write = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(order_write)
            os.close(answer_read)
            _kernel_main(order_read, answer_write, parent)  # never returns
        os.close(order_read)
        os.close(answer_write)
        return cls(pid, order_write, answer_read)

    def start(self, arguments: list[str], cwd: str | None, env: dict) -> str:
        """Start the kernel; return ``""`` once it serves, else why it did not (it has then left)."""
        try:
            _write_all(self.order_fd, pickle.dumps((arguments, cwd, env)))
            os.close(self.order_fd)
            self.order_fd = -1
            import select

            ready, _, _ = select.select([self.answer_fd], [], [], KERNEL_READY_S)
            answer = _read_all(self.answer_fd) if ready else b""
        except OSError as error:
            answer = f"{type(error).__name__}: {error}".encode()
        if answer == b"ok":
            return ""
        self.kill()
        return answer.decode(errors="replace") or "no answer"

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)

    def release(self) -> None:
        """At the end of the page: a kernel never started is told to leave, and the process is reaped."""
        for fd in (self.order_fd, self.answer_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.order_fd = self.answer_fd = -1
        try:
            done, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return
        if not done:
            self.kill()
            _reap(self.pid)


def _kernel_main(order_fd: int, answer_fd: int, parent: int) -> None:
    """The forked kernel: wait for the order, become what ``python -m ipykernel_launcher ARGS`` starts, serve."""
    code = 1
    try:
        os.setsid()  # its own process group, as jupyter_client starts kernels (interrupts go to the group)
        _die_with_parent(signal.SIGKILL)
        if os.getppid() != parent:  # the page's process died before the signal was set
            os._exit(1)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _close_fds_except(order_fd, answer_fd)
        data = _read_all(order_fd)
        os.close(order_fd)
        if not data:
            os._exit(0)  # the page's process did not need it
        arguments, cwd, env = pickle.loads(data)
        app = _initialised_app(arguments, cwd, env)
    except BaseException as error:  # noqa: BLE001 - told to the page's process, which starts a normal kernel
        with contextlib.suppress(BaseException):
            _write_all(answer_fd, f"{type(error).__name__}: {error}".encode())
        os._exit(code)
    try:
        _write_all(answer_fd, b"ok")
        os.close(answer_fd)
        app.start()
        code = 0
    except BaseException:  # noqa: BLE001 - the kernel's end, as the normal kernel's
        pass
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _close_fds_except(*keep: int) -> None:
    """Close what the kernel inherited beyond stdin/out/err and its two pipes (the pool's queues among them), as
    ``subprocess`` does for a normal kernel; stdin reads nothing, as a normal kernel's closed pipe."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return
    for name in names:
        fd = int(name)
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def _initialised_app(arguments: list[str], cwd: str | None, env: dict):
    """ipykernel's application, initialised as ``python -m ipykernel_launcher ARGS`` in ``cwd`` with ``env``."""
    if cwd:
        os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    launcher = importlib.util.find_spec("ipykernel_launcher")
    sys.argv = [launcher.origin if launcher and launcher.origin else "ipykernel_launcher", *arguments]
    # python -m puts the working directory first on the path and ipykernel_launcher removes it; the shell puts ''
    # there (InteractiveShellApp.init_path), as for the normal kernel
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
    _reset_multiprocessing()
    from ipykernel.kernelapp import IPKernelApp

    # a default ipykernel read from the environment when it was imported (by the worker, before this kernel's
    # environment was set): the parent the kernel leaves with
    app = IPKernelApp.instance(parent_handle=int(env.get("JPY_PARENT_PID") or 0))
    app.initialize(arguments)
    return app


def _reset_multiprocessing() -> None:
    """The kernel is a main process, not the pool's daemonic worker it was forked from: a page may start processes
    (a daemonic process may not), and the worker's children are not its own."""
    import multiprocessing.process as process

    current = process.current_process()
    current._config = {key: value for key, value in current._config.items() if key != "daemon"}
    current._identity, current._name, current._parent_pid, current._popen = (), "MainProcess", None, None
    process._children = set()
    process._parent_process = None


# --- the kernel manager -------------------------------------------------------------------------------


def encrypted(manager_class):
    """``manager_class`` (a jupyter_client kernel manager) provisioning CurveZMQ keys for a kernel whose spec declares
    it can use them (``transport_encryption="auto"``), where this pyzmq has CurveZMQ; unchanged otherwise."""
    import zmq
    from traitlets import default

    if not zmq.has("curve"):
        return manager_class

    class Encrypted(manager_class):
        @default("transport_encryption")
        def _transport_encryption_default(self):
            return "auto"

    Encrypted.__name__ = Encrypted.__qualname__ = f"Encrypted{manager_class.__name__}"
    return Encrypted


def kernel_manager_class(kernel: _ForkedKernel):
    """A jupyter_client kernel manager whose kernel is ``kernel`` when the spec starts ipykernel on this interpreter
    (:func:`warm_command`) and sets no variable, else a normal kernel (as for any start-up problem)."""
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_client.provisioning.local_provisioner import LocalProvisioner

    class ForkedProvisioner(LocalProvisioner):
        async def launch_kernel(self, cmd, **kwargs):
            arguments = warm_command(cmd)
            spec_env = getattr(self.kernel_spec, "env", None)
            why = "not ipykernel on this interpreter" if arguments is None else "its spec sets variables" if spec_env else ""
            if not why:
                env = dict(kwargs.get("env") or os.environ)
                env["JPY_PARENT_PID"] = str(os.getpid())  # as jupyter_client's launcher: the kernel leaves with us
                # papermill runs the client in the notebook's folder (it changes directory) rather than passing it
                cwd = kwargs.get("cwd") or os.getcwd()
                why = kernel.start(arguments, str(cwd), env)
            if why:
                kernel.release()
                self.log.info("forked kernel not used (%s): starting a normal kernel", why)
                return await super().launch_kernel(cmd, **kwargs)
            self.process = _ForkedProcess(kernel.pid)
            self.pid = self.pgid = kernel.pid
            self.cwd = kwargs.get("cwd", os.getcwd())
            return self.connection_info

    class ForkedKernelManager(AsyncKernelManager):
        async def _async_pre_start_kernel(self, **kw):
            if self.provisioner is None:
                import uuid

                self.kernel_id = self.kernel_id or kw.pop("kernel_id", str(uuid.uuid4()))
                self.provisioner = ForkedProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self)
            return await super()._async_pre_start_kernel(**kw)

    return encrypted(ForkedKernelManager)


class _ForkedProcess:
    """What jupyter_client's local provisioner asks of a :class:`subprocess.Popen`, for a forked child."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            try:
                done, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                done, status = self.pid, 0
            if done:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout=None):
        if self.returncode is None:
            if timeout is not None:
                import time

                deadline = time.monotonic() + timeout
                while self.poll() is None:
                    if time.monotonic() > deadline:
                        import subprocess

                        raise subprocess.TimeoutExpired(str(self.pid), timeout)
                    time.sleep(0.01)
                return self.returncode
            try:
                _, status = os.waitpid(self.pid, 0)
                self.returncode = os.waitstatus_to_exitcode(status)
            except ChildProcessError:
                self.returncode = 0
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)
