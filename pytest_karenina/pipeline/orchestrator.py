"""Running a list of stages over a context, and checking that the list makes sense."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pytest_karenina.pipeline.artifacts import FINAL_RESULT
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.deciding_stage import note_decision, verdict_state
from pytest_karenina.pipeline.retries import note_llm_failure
from pytest_karenina.pipeline.stage import VerificationStage
from pytest_karenina.pipeline.stage_list import default_stages
from pytest_karenina.rubrics.traits import Rubric

if TYPE_CHECKING:
    from pytest_karenina.config.choices import EvaluationMode
    from pytest_karenina.config.verification import VerificationConfig

logger = logging.getLogger("pytest_karenina.pipeline")


def _always_runs(stage: VerificationStage) -> bool:
    return bool(getattr(stage, "always_runs", False))


class StageRegistry:
    """Named stages, and validation of a stage order against requires/produces."""

    def __init__(self, stages: Iterable[VerificationStage] = ()) -> None:
        self._stages: dict[str, VerificationStage] = {}
        for stage in stages:
            self.register(stage)

    def register(self, stage: VerificationStage) -> None:
        """Add a stage; a second stage with the same name is a ``ValueError``."""
        if not isinstance(stage, VerificationStage):
            raise TypeError(f"{stage!r} does not implement the VerificationStage protocol")
        if stage.name in self._stages:
            raise ValueError(f"a stage named {stage.name!r} is already registered")
        self._stages[stage.name] = stage

    def get(self, name: str) -> VerificationStage:
        try:
            return self._stages[name]
        except KeyError:
            raise KeyError(f"no stage named {name!r} (registered: {list(self._stages)})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._stages

    def __len__(self) -> int:
        return len(self._stages)

    @staticmethod
    def validate_dependencies(stages: Sequence[VerificationStage]) -> list[str]:
        """Problems with running ``stages`` in this order (empty when none).

        Every key a stage requires must be produced by a stage before it; names
        must be unique; a stage that always runs (the finalizer) must come last.
        """
        errors: list[str] = []
        produced: dict[str, str] = {}
        seen: set[str] = set()
        for position, stage in enumerate(stages):
            if stage.name in seen:
                errors.append(f"stage {stage.name!r} appears more than once")
            seen.add(stage.name)
            for key in stage.requires:
                if key not in produced:
                    errors.append(
                        f"stage {stage.name!r} requires {key!r}, which no earlier stage produces"
                    )
            for key in stage.produces:
                produced.setdefault(key, stage.name)
            if _always_runs(stage) and position != len(stages) - 1:
                errors.append(f"stage {stage.name!r} must be the last stage")
        return errors


class StageOrchestrator:
    """Runs stages in order over one context.

    A stage runs when its ``should_run`` says so (stages marked ``always_runs``
    run regardless). An exception inside a stage (``SystemExit`` from template code
    included) is recorded as the context's error,
    ``"Stage <name> raised exception: <Type>: <message>"``, so the run
    goes on to the finalizer: one broken stage never loses the item's result.
    After each stage it notes whether the stage changed ``verify_result`` and the reason
    it gave (:mod:`.deciding_stage`): the last stage that changed it decided the verdict.
    """

    def __init__(self, stages: Sequence[VerificationStage]) -> None:
        errors = StageRegistry.validate_dependencies(stages)
        if errors:
            raise ValueError("invalid stage list: " + "; ".join(errors))
        self.stages: list[VerificationStage] = list(stages)

    @property
    def stage_names(self) -> list[str]:
        return [stage.name for stage in self.stages]

    def run(self, context: VerificationContext) -> Any:
        """Run every stage and return what the finalizer produced (if any)."""
        for stage in self.stages:
            if not (_always_runs(stage) or stage.should_run(context)):
                logger.debug("%s: skipping %s", context.question_id, stage.name)
                continue
            before = verdict_state(context)
            try:
                stage.execute(context)
            except (Exception, SystemExit) as exc:  # template code may call sys.exit()
                note_llm_failure(context, exc)
                context.mark_error(
                    f"Stage {stage.name} raised exception: {type(exc).__name__}: {exc}",
                    stage=stage.name,
                )
            note_decision(context, stage, before)
        return context.get_artifact(FINAL_RESULT)

    @classmethod
    def from_config(
        cls,
        config: VerificationConfig | None = None,
        *,
        evaluation_mode: EvaluationMode | None = None,
        abstention_enabled: bool | None = None,
        sufficiency_enabled: bool | None = None,
        rubric: Rubric | bool | None = None,
    ) -> StageOrchestrator:
        """The default stage list for ``config`` (see :func:`.stage_list.default_stages`);
        a keyword given overrides the config's value."""
        stages = default_stages(
            config,
            evaluation_mode=evaluation_mode,
            abstention_enabled=abstention_enabled,
            sufficiency_enabled=sufficiency_enabled,
            rubric=rubric,
        )
        return cls(stages)
