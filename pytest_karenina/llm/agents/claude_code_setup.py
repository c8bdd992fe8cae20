"""What a Claude Code run (``claude_agent_sdk``) is started with: its tools and permissions,
its directories, its environment and its credentials.

**Tools.** An answering agent gets Claude Code's file tools (``Read``, ``Write``, ``Edit``,
``Glob``, ``Grep``), a judge (``AgentRunConfig.read_only``) the reading ones only; never
``Bash``, the web tools or sub-agents: the CLI would run them with the user's rights and
network, outside any workspace. A model's MCP servers are added (``mcp_tool_filter`` names
the tools allowed; without it every tool of the servers).

**Permissions.** The mode is ``dontAsk``: a call the rules below do not allow is refused to
the model (never prompted for, which nobody could answer), and the rules allow reading
(``Read(./**)``) and, for an answering agent, editing (``Edit(./**)``) only under the working
directory, which the CLI checks after resolving symbolic links. ``bypassPermissions``
(Karenina's choice for its container runtime) allows every call anywhere, and the CLI refuses
it to root unless ``IS_SANDBOX=1`` claims a sandbox this plugin does not provide.

**Directories.** The CLI works in the run's workspace, or in a fresh empty directory when the
run has none (removed after the run). Its own state (settings, session files) goes to a
fresh ``CLAUDE_CONFIG_DIR`` per run, also removed, unless the environment names one; no
settings file is read (``setting_sources=[]``), no MCP server but the model's
(``strict_mcp_config``), no session is saved.

**Environment.** The key (``anthropic_api_key``, else the environment's ``ANTHROPIC_API_KEY``,
``CLAUDE_CODE_OAUTH_TOKEN`` or ``ANTHROPIC_AUTH_TOKEN``) and ``anthropic_base_url`` go to the
CLI through its environment, never its command line; ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``
is 1 unless set (no telemetry, no update check, no session-title request, no probe);
``max_tokens``, ``request_timeout`` and the retry policy's largest budget become
``CLAUDE_CODE_MAX_OUTPUT_TOKENS``, ``API_TIMEOUT_MS`` and ``CLAUDE_CODE_MAX_RETRIES``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig

CLAUDE_EXTRA = "pip install 'pytest-karenina[claude]'"
ANSWER_TOOLS = ("Read", "Write", "Edit", "Glob", "Grep")
JUDGE_TOOLS = ("Read", "Glob", "Grep")
READ_RULE = "Read(./**)"
EDIT_RULE = "Edit(./**)"
PERMISSION_MODE = "dontAsk"
KEY_VARIABLE = "ANTHROPIC_API_KEY"
TOKEN_VARIABLES = ("CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN")
CREDENTIAL_VARIABLES = (KEY_VARIABLE, *TOKEN_VARIABLES)
"""Any one of these lets the CLI reach its API (an API key, or a subscription's token)."""
CLI_PATH_SETTING = "cli_path"
"""``extra_kwargs`` key: the ``claude`` executable to run instead of the one the package
bundles."""


class ClaudeCodeSetupError(RuntimeError):
    """A run that cannot start: no key, no CLI (the message says which)."""


def missing_claude_extra() -> str | None:
    """Why ``claude_agent_sdk`` models cannot run here, or None: ``claude-agent-sdk`` runs
    their agent, ``anthropic`` their one-call replies (both in the ``claude`` extra)."""
    from importlib.util import find_spec

    missing = [
        package
        for package, module in (
            ("claude-agent-sdk", "claude_agent_sdk"),
            ("anthropic", "anthropic"),
        )
        if find_spec(module) is None
    ]
    if not missing:
        return None
    return f"claude_agent_sdk models need {' and '.join(missing)}: {CLAUDE_EXTRA}"


def credentials(model: ModelConfig, environ: Mapping[str, str]) -> dict[str, str]:
    """The credential variables the CLI gets beyond its inherited environment (empty when
    the environment has one); :class:`ClaudeCodeSetupError` when there is none at all."""
    if model.anthropic_api_key is not None:
        return {KEY_VARIABLE: model.anthropic_api_key.get_secret_value()}
    if any(environ.get(name) for name in CREDENTIAL_VARIABLES):
        return {}
    raise ClaudeCodeSetupError(
        f"no API key: set {KEY_VARIABLE} (or {' or '.join(TOKEN_VARIABLES)} for a Claude "
        "subscription) or the model's anthropic_api_key"
    )


def cli_path(model: ModelConfig) -> str | None:
    """The ``claude`` executable the model names (None: the bundled one, else PATH's);
    :class:`ClaudeCodeSetupError` when it names one that is not there."""
    named = (model.extra_kwargs or {}).get(CLI_PATH_SETTING)
    if named is None:
        return None
    path = Path(str(named)).expanduser()
    found = path if path.is_file() else shutil.which(str(named))
    if found is None:
        raise ClaudeCodeSetupError(
            f"the Claude Code CLI was not found: extra_kwargs.{CLI_PATH_SETTING}={named!r}"
        )
    return str(found)


def tool_settings(model: ModelConfig, read_only: bool) -> dict[str, Any]:
    """``tools``, ``allowed_tools``, ``mcp_servers`` and ``permission_mode`` of a run."""
    rules = [READ_RULE] if read_only else [READ_RULE, EDIT_RULE]
    servers: dict[str, dict[str, str]] = {}
    for name, url in (model.mcp_urls_dict or {}).items():
        transport = "sse" if url.rstrip("/").endswith("/sse") else "http"
        servers[name] = {"type": transport, "url": url}
        wanted = model.mcp_tool_filter
        rules += [f"mcp__{name}__{tool}" for tool in wanted] if wanted else [f"mcp__{name}"]
    return {
        "tools": list(JUDGE_TOOLS if read_only else ANSWER_TOOLS),
        "allowed_tools": rules,
        "mcp_servers": servers,
        "strict_mcp_config": True,
        "permission_mode": PERMISSION_MODE,
        "setting_sources": [],
    }


def run_environment(
    model: ModelConfig, config_dir: Path | None, environ: Mapping[str, str]
) -> dict[str, str]:
    """The variables set for the CLI over the inherited environment."""
    env = credentials(model, environ)
    if model.anthropic_base_url:
        env["ANTHROPIC_BASE_URL"] = model.anthropic_base_url
    if config_dir is not None:
        env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    env.setdefault("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
                   environ.get("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"))  # fmt: skip
    env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(model.max_tokens)
    if model.request_timeout is not None:
        env["API_TIMEOUT_MS"] = str(int(model.request_timeout * 1000))
    if model.retry_policy is not None:
        env["CLAUDE_CODE_MAX_RETRIES"] = str(model.retry_policy.derive_sdk_max_retries())
    return env


@dataclass
class RunPlace:
    """The directories of one run: where the CLI works and keeps its state; what this
    module made for it is removed by :meth:`remove`."""

    cwd: Path
    config_dir: Path | None
    made: Path | None

    @classmethod
    def make(cls, workspace: Path | None, environ: Mapping[str, str]) -> RunPlace:
        own_config = not environ.get("CLAUDE_CONFIG_DIR")
        if workspace is not None and not own_config:
            return cls(workspace, None, None)
        made = Path(tempfile.mkdtemp(prefix="karenina-claude-"))
        cwd = workspace
        if cwd is None:
            cwd = made / "work"
            cwd.mkdir()
        config_dir = None
        if own_config:
            config_dir = made / "config"
            config_dir.mkdir()
        return cls(cwd, config_dir, made)

    def remove(self) -> None:
        if self.made is not None:
            shutil.rmtree(self.made, ignore_errors=True)


def process_environ() -> Mapping[str, str]:
    """The environment the CLI inherits (the SDK passes it on)."""
    return os.environ
