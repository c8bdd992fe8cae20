"""Token usage turned into money: a price table, and the cost of an item's results.

There are no built-in prices (they change): a table maps model names to USD per million
input and output tokens. A model is found by the name written in ``usage_metadata``
(``interface:model_name (config id) +[tools]``): the table's key may be the model name
(``gpt-4.1-mini``), the model's config id, or ``provider:model_name``
(``openai:gpt-4.1-mini``).

The answering cost counts each generated answer once: the results of one replicate that
differ only in their judge share one answer, whose usage each of them reports.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_karenina.results.result import VerificationResult

ANSWER_STAGE = "answer_generation"
_LINE = re.compile(
    r"^\s*(?P<model>\S.*?)\s*=\s*(?P<input>[^\s/]+)\s*(?:/|\s)\s*(?P<output>\S+)\s*$"
)
_LABEL = re.compile(r"^(?P<interface>[^:]+):(?P<model>.*?)(?: \((?P<id>[^)]*)\))?(?: \+\[.*\])?$")


class PriceError(ValueError):
    """A price table that cannot be read; the message names the source and the entry."""


BATCH_FACTOR = 0.5
"""The batch price of a model whose entry names none: OpenAI's and Anthropic's batch
discount (half the price of a live call)."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens: finite and not negative (a :class:`ValueError` otherwise).

    ``batch``: the model's batch prices (input, output), else :data:`BATCH_FACTOR` of these.
    """

    input: float
    output: float
    batch: tuple[float, float] | None = None

    def batched(self) -> Price:
        """The price of the same call through a provider's batch API."""
        if self.batch is not None:
            return Price(*self.batch)
        return Price(self.input * BATCH_FACTOR, self.output * BATCH_FACTOR)

    def __post_init__(self) -> None:
        if not all(math.isfinite(value) and value >= 0 for value in (self.input, self.output)):
            raise ValueError(f"a price must be finite and not negative, got {self}")

    def of(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


def _price(source: str, model: str, values: Sequence[Any]) -> Price:
    try:  # a JSON true is no price, though float() takes it
        found = [float(value) for value in values if not isinstance(value, bool)]
    except (TypeError, ValueError):
        found = []
    # NaN compares false with everything: a NaN price would switch the cost cap off.
    if len(found) != 2 or not all(math.isfinite(value) and value >= 0 for value in found):
        raise PriceError(
            f"{source}: {model}: expected an input and an output price (USD per million "
            f"tokens, finite and not negative), got {list(values)!r}"
        )
    return Price(found[0], found[1])


@dataclass(frozen=True)
class PriceTable:
    prices: dict[str, Price]

    @classmethod
    def from_lines(cls, lines: Iterable[str], source: str) -> PriceTable:
        """``MODEL = INPUT OUTPUT`` lines (``INPUT / OUTPUT`` too); blank and ``#`` lines
        are skipped."""
        prices = {}
        for number, line in enumerate(lines, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            match = _LINE.match(line)
            if match is None:
                raise PriceError(f"{source}, line {number}: expected MODEL = INPUT OUTPUT, "
                                 f"got {line.strip()!r}")  # fmt: skip
            model = match["model"]
            prices[model] = _price(
                f"{source}, line {number}", model, [match["input"], match["output"]]
            )
        return cls(prices)

    @classmethod
    def from_file(cls, path: Path) -> PriceTable:
        """A JSON object ``{model: {"input": X, "output": Y}}`` (or ``[X, Y]``), or a text
        file of :meth:`from_lines` lines."""
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise PriceError(f"{path}: cannot read the price table ({exc})") from None
        if not text.lstrip().startswith("{"):
            return cls.from_lines(text.splitlines(), str(path))
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise PriceError(f"{path}: not valid JSON ({exc})") from None
        prices = {}
        for model, value in data.items():
            pair = [value.get("input"), value.get("output")] if isinstance(value, dict) else value
            prices[str(model)] = _price(
                str(path), str(model), pair if isinstance(pair, list) else [pair]
            )
            if isinstance(value, dict) and "batch" in value:
                prices[str(model)] = _with_batch(prices[str(model)], value["batch"], path, model)
        return cls(prices)

    def batched(self) -> PriceTable:
        """Every model at its batch price (``--karenina-batch``)."""
        return PriceTable({model: price.batched() for model, price in self.prices.items()})

    def merged(self, other: PriceTable) -> PriceTable:
        """This table with ``other``'s entries added (``other`` wins)."""
        return PriceTable({**self.prices, **other.prices})

    def lookup(self, label: str | None) -> Price | None:
        """The price of the model a usage entry names (None when the table has none)."""
        if not label:
            return None
        if label in self.prices:
            return self.prices[label]
        match = _LABEL.match(label)
        names = {label}
        if match is not None:
            names |= {match["model"], match["id"] or ""}
        for key, price in self.prices.items():
            if key in names or (":" in key and key.split(":", 1)[1] in names):
                return price
        return None


def _with_batch(price: Price, batch: Any, path: Path, model: str) -> Price:
    """``price`` with the batch entry of a JSON table: a factor of the live price (``0.5``),
    or ``{"input": X, "output": Y}`` / ``[X, Y]``."""
    if isinstance(batch, int | float) and not isinstance(batch, bool):
        if not (math.isfinite(batch) and 0 <= batch):
            raise PriceError(f"{path}: {model}: batch factor must be >= 0, got {batch!r}")
        return Price(price.input, price.output, (price.input * batch, price.output * batch))
    pair = [batch.get("input"), batch.get("output")] if isinstance(batch, dict) else batch
    found = _price(f"{path} (batch)", model, pair if isinstance(pair, list) else [pair])
    return Price(price.input, price.output, (found.input, found.output))


@dataclass(frozen=True)
class Cost:
    """USD spent by the answering model(s) and by the judges, and the models without a
    price (their usage is not counted)."""

    answerer: float = 0.0
    judge: float = 0.0
    unpriced: frozenset[str] = field(default_factory=frozenset)

    @property
    def total(self) -> float:
        return self.answerer + self.judge

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.answerer + other.answerer, self.judge + other.judge,
                    self.unpriced | other.unpriced)  # fmt: skip


def _stages(result: VerificationResult) -> Mapping[str, Any]:
    usage = result.template.usage_metadata if result.template is not None else None
    return usage or {}


def _priced(
    results: Sequence[VerificationResult], prices: PriceTable
) -> Iterator[tuple[str, float | None, str]]:
    """Each usage entry of ``results`` as (stage, USD or None without a price, model name),
    each replicate's answer once."""
    answered: set[object] = set()
    for result in results:
        for stage, entry in _stages(result).items():
            if stage == "total" or not isinstance(entry, Mapping):
                continue
            if stage == ANSWER_STAGE:
                replicate = (result.metadata.answering.model_name, result.metadata.replicate)
                if replicate in answered:
                    continue
                answered.add(replicate)
            model = entry.get("model")
            price = prices.lookup(model)
            if price is None:
                yield stage, None, str(model or "unknown model")
                continue
            usd = price.of(
                int(entry.get("input_tokens") or 0), int(entry.get("output_tokens") or 0)
            )
            yield stage, usd, str(model)


def results_cost(results: Sequence[VerificationResult], prices: PriceTable) -> Cost:
    """The cost of one item's results (each replicate's answer counted once)."""
    answerer = judge = 0.0
    unpriced: set[str] = set()
    for stage, usd, model in _priced(results, prices):
        if usd is None:
            unpriced.add(model)
        elif stage == ANSWER_STAGE:
            answerer += usd
        else:
            judge += usd
    return Cost(answerer, judge, frozenset(unpriced))


def stage_costs(results: Sequence[VerificationResult], prices: PriceTable) -> dict[str, float]:
    """USD per pipeline stage (the keys of ``usage_metadata``: ``answer_generation``,
    ``parsing``, ...) of one item's results, priced stages only; they add up to
    :func:`results_cost`'s total."""
    found: dict[str, float] = {}
    for stage, usd, _ in _priced(results, prices):
        if usd is not None:
            found[stage] = found.get(stage, 0.0) + usd
    return found
