"""``--karenina-judge-check LABELS``: a checkpoint's items are its labelled answers.

Each label is a test item (:class:`JudgeCheckItem`, ``capital[3f2a1c0b]``, or the label's
own name): its pipeline judges the labelled answer (the answer is handed over, no answering
model is asked), the item passes when every judge agrees with people on the verdict and on
every labelled field, fails with the disagreement explained, and errors (unmeasured) when the
pipeline could not judge. So ``-k``, ``--lf``, xdist and the reports work per label.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.plugin.collect.items import (
    ModelReplicate,
    QuestionItem,
    question_slug,
)
from pytest_karenina.plugin.collect.labels import LabelSet
from pytest_karenina.plugin.verdict.judge_check import (
    JudgeDisagrees,
    Label,
    LabelCheck,
    check_label,
)

UNMEASURED = (
    "unmeasured: a judge reached no verdict on this answer (the evaluation mode decided "
    "nothing, or its judge replicates tie)"
)


class JudgeCheckItem(QuestionItem):
    """One labelled answer: the judge's verdict and extraction against people's."""

    def __init__(self, *, label: Label, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.label = label
        self.given_answer = label.answer
        self.check: LabelCheck | None = None
        self.user_properties.append(
            ("karenina.people_verdict", "pass" if label.people_pass else "fail")
        )

    def setup(self) -> None:
        """The pipeline judges the answer (errors of the pipeline are errors of the item, as
        for any question); then its verdicts are compared with the label."""
        self.check = None
        try:
            super().setup()
        finally:
            if self.verdicts:
                self.check = check_label(self.label, self.verdicts, self.facts)

    def teardown(self) -> None:
        super().teardown()
        self.check = None

    def runtest(self) -> None:
        check = self.check
        agrees = check.agrees if check is not None else None
        if check is None or agrees is None:
            pytest.skip(UNMEASURED)
        if not agrees:
            raise JudgeDisagrees(check)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, JudgeDisagrees):
            return excinfo.value.check.explain()
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, 0, f"label {self.label.label_id} ({self.label.source})"


def labelled_items(
    file: pytest.File, benchmark: Benchmark, labels: LabelSet, vconfig: VerificationConfig
) -> list[pytest.Item]:
    """The judge-check items of ``file``: one per label of its questions, in the labels
    file's order (xdist workers collect identically)."""
    answering, _ = vconfig.stamped_models()
    combination = ModelReplicate(answering[0], 0, None, None)
    rubrics = (benchmark.global_rubric, benchmark.global_dynamic_rubric)
    questions = {question.id: question for question in benchmark.questions}
    items: list[pytest.Item] = []
    for label in labels.of_checkpoint(file.path.resolve()):
        name = f"{question_slug(label.question_id)}[{label.label_id}]"
        # An explicit nodeid, as for question items (pytest-dev/pytest#15045).
        item = JudgeCheckItem.from_parent(
            file, name=name, nodeid=f"{file.nodeid}::{name}",
            question=questions[label.question_id], model_replicate=combination,
            rubrics=rubrics, label=label,
        )  # fmt: skip
        items.append(item)
    return items
