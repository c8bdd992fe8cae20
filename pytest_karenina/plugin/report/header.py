"""The report header: models, mode, concurrency, replay and request limits of the run."""

from __future__ import annotations

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.plugin.options.settings import Settings, judge_store_path
from pytest_karenina.plugin.report.saved_workspaces import header_line as saved_workspaces_line


def _names(models: list[ModelConfig]) -> str:
    return ", ".join(str(model.id or model.model_name or "?") for model in models)


def header_lines(settings: Settings, vconfig: VerificationConfig, distributed: bool) -> list[str]:
    """``karenina: ...`` lines; ``distributed``: xdist workers split the request limits."""
    answering, parsing = vconfig.stamped_models()
    replay: str = settings.replay
    if replay != "off":
        store = settings.replay_store.name if settings.replay_store else "default store"
        judge = ""
        if replay == "answers" and settings.judge_replay == "off":
            judge = "; judge live"
        elif replay == "answers":
            judge = f"; judge {settings.judge_replay} {judge_store_path(settings).name}"
        replay += f" ({store}{judge})"
    lines = [
        f"karenina: answering {_names(answering)}; parsing {_names(parsing)}",
        f"karenina: mode {vconfig.evaluation_mode}, replicates {vconfig.replicate_count}, "
        f"concurrency {settings.concurrency}, replay {replay}",
    ]
    if vconfig.deep_judgment_mode != "disabled":
        lines.append(f"karenina: deep judgment {vconfig.deep_judgment_mode}")
    if vconfig.deep_judgment_rubric_mode != "disabled":
        lines.append(f"karenina: rubric deep judgment {vconfig.deep_judgment_rubric_mode}")
    if vconfig.judge_replicate_count > 1:
        count = vconfig.judge_replicate_count
        lines.append(f"karenina: judge replicates {count} per answer (their majority decides)")
    if settings.replay_note:
        lines.append(f"karenina: {settings.replay_note}")
    saved = saved_workspaces_line(vconfig)
    if saved is not None:
        lines.append(saved)
    limits = [
        f"{settings.max_concurrent_requests} in flight" if settings.max_concurrent_requests else "",
        f"{settings.requests_per_minute:g}/min" if settings.requests_per_minute else "",
        f"{settings.llm_timeout:g}s per call" if settings.llm_timeout else "",
        f"at most {settings.max_retries} retries" if settings.max_retries is not None else "",
    ]
    if any(limits):
        shared = " (split across xdist workers)" if distributed else ""
        lines.append(f"karenina: per model {', '.join(x for x in limits if x)}{shared}")
    return lines
