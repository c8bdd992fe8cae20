"""Search-enhanced deep judgment: what the world says about each quoted excerpt.

With ``deep_judgment_search_enabled`` every accepted quote is sent to a search tool, the
results are attached to the excerpt (``search_results``), and one judge call rates each
excerpt's hallucination risk against them (none < low < medium < high). An attribute's risk
is the highest of its excerpts' (an excerpt the judge did not rate counts as high).

A search tool is a callable taking the list of queries and returning, per query, a list of
``{title, content, url}`` results; ``"tavily"`` builds one on the ``tavily-python`` client
(the ``search`` extra, ``TAVILY_API_KEY``). A failing search is a warning, never an error.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from pytest_karenina.llm.ports import ChatPort, Usage
from pytest_karenina.pipeline.deep_judgment.calls import ask_json, json_object
from pytest_karenina.prompts.deep_judgment import hallucination_messages

SearchFunction = Callable[[list[str]], Sequence[Any]]
RISKS = ("none", "low", "medium", "high")
HALLUCINATION_USAGE = "deep_judgment_hallucination_assessment"


class SearchUnavailable(RuntimeError):
    """The configured search tool cannot be used here (a missing extra or key)."""


def tavily_search(
    max_results: int = 3, setting: str = "deep_judgment_search_tool"
) -> SearchFunction:
    """A search function on Tavily's client, made when a run needs it; ``setting`` names
    the configuration field in errors."""
    try:
        from tavily import TavilyClient  # type: ignore[import-not-found]
    except ImportError as exc:
        raise SearchUnavailable(
            f"{setting}='tavily' needs tavily-python: pip install 'pytest-karenina[search]'"
        ) from exc
    key = os.environ.get("TAVILY_API_KEY", "")
    if not key.strip():
        raise SearchUnavailable(f"{setting}='tavily' needs TAVILY_API_KEY")
    client = TavilyClient(api_key=key)

    def search(queries: list[str]) -> list[list[dict[str, Any]]]:
        found = []
        for query in queries:
            reply = client.search(query, max_results=max_results)
            found.append([
                {"title": r.get("title"), "content": r.get("content"), "url": r.get("url")}
                for r in reply.get("results", [])
            ])  # fmt: skip
        return found

    return search


def resolve_search_tool(tool: object, setting: str = "deep_judgment_search_tool") -> SearchFunction:
    """The search function of ``tool`` (a callable, or ``"tavily"``), the value of the
    configuration field ``setting``."""
    if callable(tool):
        return tool
    if isinstance(tool, str) and tool.strip().lower() == "tavily":
        return tavily_search(setting=setting)
    raise SearchUnavailable(
        f"{setting}={tool!r}: not a known search tool (the built-in one is "
        "'tavily'; a conftest.py provides others with pytest_karenina_search_tool)"
    )


def _results(value: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [] if value is None else [value]
    return [item if isinstance(item, dict) else {"content": str(item)} for item in items]


def attach_search_results(
    search: SearchFunction, excerpts: Mapping[str, list[dict[str, Any]]]
) -> list[str]:
    """Search every quoted excerpt, in one call, and store ``search_results`` on each; the
    warnings (none when the search worked)."""
    quoted = [e for quotes in excerpts.values() for e in quotes if e.get("text")]
    if not quoted:
        return []
    try:
        found = list(search([str(e["text"]) for e in quoted]))
    except Exception as exc:  # a search backend's failure costs the search, not the item
        return [f"deep judgment search failed: {type(exc).__name__}: {exc}"]
    for index, excerpt in enumerate(quoted):
        excerpt["search_results"] = _results(found[index] if index < len(found) else None)
    return []


def assessment_block(
    excerpts: Mapping[str, list[dict[str, Any]]],
) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """The ``<excerpt>`` blocks of the hallucination prompt, and ``(id, excerpt)`` pairs."""
    blocks: list[str] = []
    ids: list[tuple[str, dict[str, Any]]] = []
    for attribute, quotes in excerpts.items():
        for number, excerpt in enumerate(q for q in quotes if q.get("text")):
            excerpt_id = f"{attribute}-{number + 1}"
            ids.append((excerpt_id, excerpt))
            results = "\n".join(
                f"  - {r.get('title') or ''}: {r.get('content') or ''} ({r.get('url') or ''})"
                for r in excerpt.get("search_results") or []
            )
            blocks.append(
                f'<excerpt id="{excerpt_id}" attribute="{attribute}">\n'
                f"Text: {excerpt['text']}\nConfidence: {excerpt.get('confidence')}\n"
                f"Similarity: {excerpt.get('similarity_score')}\n"
                f"Search results:\n{results or '  (none)'}\n</excerpt>"
            )
    return "\n\n".join(blocks), ids


def attribute_risks(
    excerpts: Mapping[str, list[dict[str, Any]]], assessed: Mapping[str, Mapping[str, Any]]
) -> dict[str, str]:
    """Store each excerpt's rating on it; per attribute, the highest risk (unrated: high)."""
    risks: dict[str, str] = {}
    for attribute, quotes in excerpts.items():
        worst = -1
        for number, excerpt in enumerate(q for q in quotes if q.get("text")):
            rating = assessed.get(f"{attribute}-{number + 1}") or {}
            risk = str(rating.get("hallucination_risk", "")).strip().lower()
            risk = risk if risk in RISKS else "high"
            excerpt["hallucination_risk"] = risk
            excerpt["hallucination_justification"] = str(rating.get("justification") or "")
            worst = max(worst, RISKS.index(risk))
        if worst >= 0:
            risks[attribute] = RISKS[worst]
    return risks


def rate_excerpts(
    judge: ChatPort,
    question: str,
    excerpts: Mapping[str, list[dict[str, Any]]],
    *,
    call_kind: str,
    instructions: str | None = None,
    shape: type[BaseModel] | None = None,
) -> tuple[dict[str, str], Usage | None, list[str]]:
    """One judge call rating every quoted excerpt's hallucination risk against its search
    results: the risk per key of ``excerpts`` (see :func:`attribute_risks`), the call's usage
    (None when nothing was quoted, and no call made) and warnings. With a reply class
    (``shape``) the call asks for it natively where the judge can (:func:`.calls.ask_json`)."""
    blocks, ids = assessment_block(excerpts)
    if not ids:
        return {}, None, []
    messages = hallucination_messages(question, blocks, instructions=instructions)
    if shape is None:
        reply = judge.chat(messages, call_kind=call_kind)
    else:
        reply = ask_json(judge, messages, shape, call_kind=call_kind)
    rated = (json_object(reply.text) or {}).get("excerpt_assessments")
    assessed = {
        str(item.get("excerpt_id")): item
        for item in (rated if isinstance(rated, list) else [])
        if isinstance(item, Mapping)
    }
    warnings = [] if assessed else ["deep judgment: the hallucination ratings were unreadable"]
    return attribute_risks(excerpts, assessed), reply.usage, warnings
