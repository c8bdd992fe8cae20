"""The MCP test server (:mod:`.mcp_server`) in a process of its own, for tests where a server
that stops, dies or restarts is the point.

::

    with MCPProcess(tmp_path, stateful=True) as server:
        ...              # server.url
        server.restart() # killed, then a new process on the same port
        server.kill()    # gone for good (until start())
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import TracebackType

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0
"""Seconds for a server process to print its port (imports take seconds on a busy machine)."""


class MCPProcess:
    def __init__(self, notes_dir: Path, *, stateful: bool = False) -> None:
        self.notes_dir = notes_dir
        self.stateful = stateful
        self.port = 0
        self._process: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        """Start a server process, on the port of the last one if there was one."""
        command = [sys.executable, "-m", "tests.support.mcp_server", str(self.notes_dir),
                   f"--port={self.port}", *(["--stateful"] if self.stateful else [])]  # fmt: skip
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        self._process = process
        assert process.stdout is not None
        try:
            line = _read_line(process, START_TIMEOUT)
        except BaseException:
            self.kill()
            raise
        self.port = int(line)

    def kill(self) -> None:
        """Kill the server process and wait for it to end."""
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()

    def restart(self) -> None:
        self.kill()
        self.start()

    def __enter__(self) -> MCPProcess:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.kill()


def _read_line(process: subprocess.Popen[str], timeout: float) -> str:
    import threading

    found: list[str] = []
    assert process.stdout is not None
    reader = threading.Thread(target=lambda: found.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    if not found or not found[0].strip():
        raise RuntimeError(f"the MCP server process did not start (exit code {process.poll()})")
    return found[0].strip()
