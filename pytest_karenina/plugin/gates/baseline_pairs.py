"""Which answering model of a run is compared with which model of its baseline.

A run's model is compared with the baseline model of the same name; with the one model the
baseline has when the run has one model too and neither has the other's
(``--karenina-answering-model B`` against a baseline of ``A``); or with the model
``--karenina-baseline-model NEW=OLD`` names. A mapping that names a model the run does not
have (NEW) or the baseline does not have (OLD) is refused before anything runs.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field


class PairingError(ValueError):
    """A model mapping that does not fit the run or its baseline; the message names it."""


@dataclass(frozen=True)
class Pairing:
    """Run model -> the baseline model its entries are compared with."""

    pairs: dict[str, str] = field(default_factory=dict)
    run_models: tuple[str, ...] = ()
    baseline_models: tuple[str, ...] = ()
    automatic: bool = False
    """The two single models were paired because each side has one."""

    def of(self, model: str) -> str | None:
        return self.pairs.get(model)

    @property
    def swapped(self) -> bool:
        """Whether some run model is compared with a baseline model of another name."""
        return any(new != old for new, old in self.pairs.items())

    def unpaired(self) -> tuple[list[str], list[str]]:
        """``(run models, baseline models)`` that nothing pairs."""
        taken = set(self.pairs.values())
        return (
            [model for model in self.run_models if model not in self.pairs],
            [model for model in self.baseline_models if model not in taken],
        )

    def hint(self) -> str | None:
        """How to pair the models nothing pairs (None when there is nothing to pair)."""
        new, old = self.unpaired()
        if not new or not old:
            return None
        return (
            f"run models {', '.join(new)} vs baseline models {', '.join(old)}: pair them with "
            f"--karenina-baseline-model NEW=OLD (e.g. {new[0]}={old[0]})"
        )


def pair_models(
    run_models: Sequence[str],
    baseline_models: Collection[str],
    mapping: Mapping[str, str] | Sequence[tuple[str, str]] = (),
    where: str = "--karenina-baseline-model",
    source: str = "the baseline",
) -> Pairing:
    """The pairing of ``run_models`` with ``baseline_models``; ``mapping``: ``NEW=OLD``
    pairs given by the user (``where`` names them in errors, ``source`` the baseline).
    :class:`PairingError` when a mapping names a model one side does not have."""
    given = list(mapping.items()) if isinstance(mapping, Mapping) else list(mapping)
    run = tuple(dict.fromkeys(run_models))
    known = tuple(sorted(set(baseline_models)))
    pairs: dict[str, str] = {}
    for new, old in given:
        if new not in run:
            raise PairingError(
                f"{where} {new}={old}: {new!r} is not an answering model of this run "
                f"({', '.join(run) or 'none'})"
            )
        if old not in known:
            raise PairingError(
                f"{where} {new}={old}: {old!r} is not a model of {source} "
                f"({', '.join(known) or 'no entries'})"
            )
        if new in pairs:
            raise PairingError(f"{where} {new}={old}: {new!r} is mapped twice")
        pairs[new] = old
    for model in run:
        if model not in pairs and model in known:
            pairs[model] = model
    automatic = False
    if not given and len(run) == 1 and len(known) == 1 and run[0] not in pairs:
        pairs[run[0]] = known[0]
        automatic = True
    return Pairing(pairs, run, known, automatic)
