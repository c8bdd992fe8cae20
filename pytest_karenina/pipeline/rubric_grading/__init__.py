"""Grading rubric traits for the RubricEvaluation stage: the LLM judge calls (batch or
sequential, literal, metric and template-kind traits), the dynamic-trait presence check,
regex and callable traits, and the :class:`RubricOutcome` they fill.

The trait models and the pure rules they follow live in :mod:`pytest_karenina.rubrics`;
everything here talks to a judge or runs trait code.
"""
