"""The answer of a label: written in the labels file, or a reference to a recorded one.

An answer is given as

* ``answer``: its text (CSV and JSON), or in JSON a recorded conversation in any shape the
  ``manual`` interface reads (a list of messages, ``{"trace_messages": [...]}``...);
* ``answer_ref``: ``PATH`` or ``PATH#model=M&replicate=R``, a results export (what
  ``--karenina-results`` writes, or any result file Karenina loads) whose result for the
  label's question holds the answer (``template.raw_llm_response`` and its trace). ``PATH`` is
  relative to the labels file; ``model`` (the answering model's id, name or
  ``interface:name``) and ``replicate`` pick one result where the export has several answers
  to the question (the judges of one answer share it, so several parsing models are fine).

Either way the answer becomes the artifacts the pipeline's GenerateAnswer stage takes as a
cached answer, so no answering model is asked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from pytest_karenina.llm.adapters.manual_model import ManualModel, ManualTraceError, conversation
from pytest_karenina.llm.ports import ModelReply
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.results.agent_metrics import agent_metrics
from pytest_karenina.results.export import read_export_payload

SELECTORS = ("model", "replicate")
"""The keys of an ``answer_ref``'s ``#`` part."""
_KEPT = (
    ArtifactKeys.RAW_LLM_RESPONSE,
    ArtifactKeys.TRACE_MESSAGES,
    ArtifactKeys.CONVERSATION_CONTEXT,
    ArtifactKeys.RECURSION_LIMIT_REACHED,
    ArtifactKeys.RESPONSE_TIMEOUT_PARTIAL,
    ArtifactKeys.AGENT_METRICS,
    ArtifactKeys.ANSWERING_MCP_SERVERS,
)
"""What a recorded result's ``template`` section holds of its answer."""


class AnswerError(ValueError):
    """An answer that cannot be read (the message says why, without the location)."""


def given_answer(recorded: Any) -> dict[str, Any]:
    """The artifacts of an answer written in the labels file (a text or a conversation)."""
    if isinstance(recorded, str) and not recorded.strip():
        raise AnswerError("the answer is empty")
    try:
        conversation(recorded)
    except ManualTraceError as exc:
        raise AnswerError(str(exc)) from None
    reply: ModelReply = ManualModel({"answer": recorded}).answers["answer"]
    recorded_trace = reply.trace_messages
    trace = recorded_trace or [{"role": "assistant", "content": reply.text, "block_index": 0}]
    return {
        ArtifactKeys.RAW_LLM_RESPONSE: reply.text,
        ArtifactKeys.TRACE_MESSAGES: trace,
        ArtifactKeys.CONVERSATION_CONTEXT: [],
        ArtifactKeys.RECURSION_LIMIT_REACHED: False,
        ArtifactKeys.RESPONSE_TIMEOUT_PARTIAL: False,
        ArtifactKeys.AGENT_METRICS: (
            agent_metrics(trace) if recorded_trace else {"iterations": 1, "limit_reached": False}
        ),
        ArtifactKeys.ANSWERING_MCP_SERVERS: None,
    }


class RecordedAnswers:
    """Results exports read once each, for ``answer_ref`` references."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self._read: dict[Path, list[Mapping[str, Any]]] = {}

    def _results(self, path: Path) -> list[Mapping[str, Any]]:
        if path not in self._read:
            try:
                found, _ = read_export_payload(path.read_text(encoding="utf-8"))
            except OSError as exc:
                raise AnswerError(f"cannot read {path}: {exc.strerror or exc}") from None
            except ValueError as exc:
                raise AnswerError(f"{path}: {exc}") from None
            self._read[path] = [r for r in found if isinstance(r, Mapping)]
        return self._read[path]

    def answer(self, reference: str, question_id: str) -> dict[str, Any]:
        """The artifacts of the answer ``reference`` names for ``question_id``."""
        name, _, selector = reference.strip().partition("#")
        if not name:
            raise AnswerError(f"answer_ref {reference!r} names no file")
        wanted = _selector(selector)
        path = Path(name).expanduser()
        path = path if path.is_absolute() else self.base / path
        matching = [
            result for result in self._results(path)
            if _question(result) == question_id and _selected(result, wanted)
        ]  # fmt: skip
        answers = {_template(r).get(ArtifactKeys.RAW_LLM_RESPONSE) or "": r for r in matching}
        if not answers:
            picked = "".join(f", {key} {value}" for key, value in wanted.items())
            raise AnswerError(f"{name} has no answer to question {question_id!r}{picked}")
        if len(answers) > 1:
            seen = sorted({_describe(r) for r in answers.values()})
            raise AnswerError(
                f"{name} has {len(answers)} answers to question {question_id!r} ("
                f"{'; '.join(seen)}): pick one with #model=...&replicate=..."
            )
        text, result = next(iter(answers.items()))
        if not text.strip():
            raise AnswerError(f"{name}: the recorded answer to {question_id!r} is empty")
        template = _template(result)
        return {key: template[key] for key in _KEPT if key in template}


def _selector(text: str) -> dict[str, str]:
    if not text:
        return {}
    pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=False)
    unknown = [key for key, _ in pairs if key not in SELECTORS]
    if unknown or not pairs:
        raise AnswerError(
            f"answer_ref selector {text!r}: expected model=...&replicate=... "
            f"(keys {', '.join(SELECTORS)})"
        )
    found = dict(pairs)
    if "replicate" in found and not found["replicate"].isdigit():
        raise AnswerError(f"answer_ref selector: replicate {found['replicate']!r} is no number")
    return found


def _metadata(result: Mapping[str, Any]) -> Mapping[str, Any]:
    found = result.get("metadata")
    return found if isinstance(found, Mapping) else {}


def _template(result: Mapping[str, Any]) -> Mapping[str, Any]:
    found = result.get("template")
    return found if isinstance(found, Mapping) else {}


def _question(result: Mapping[str, Any]) -> str | None:
    found = _metadata(result).get("question_id")
    return str(found) if found is not None else None


def _model_names(result: Mapping[str, Any]) -> set[str]:
    answering = _metadata(result).get("answering")
    if isinstance(answering, str):  # an old export: the display string only
        return {answering}
    if not isinstance(answering, Mapping):
        return set()
    names = {str(answering.get(key)) for key in ("config_id", "model_name") if answering.get(key)}
    if answering.get("interface") and answering.get("model_name"):
        names.add(f"{answering['interface']}:{answering['model_name']}")
    return names


def _selected(result: Mapping[str, Any], wanted: Mapping[str, str]) -> bool:
    if "model" in wanted and wanted["model"] not in _model_names(result):
        return False
    replicate = _metadata(result).get("replicate")
    return "replicate" not in wanted or str(replicate) == wanted["replicate"]


def _describe(result: Mapping[str, Any]) -> str:
    names = sorted(_model_names(result)) or ["?"]
    replicate = _metadata(result).get("replicate")
    text = f"model {names[0]}"
    return text if replicate is None else f"{text}, replicate {replicate}"


def answer_digest_text(answer: Mapping[str, Any]) -> str:
    """What identifies an answer for duplicate labels: its text and its trace."""
    return json.dumps(
        [answer.get(ArtifactKeys.RAW_LLM_RESPONSE), answer.get(ArtifactKeys.TRACE_MESSAGES)],
        sort_keys=True,
        default=str,
    )
