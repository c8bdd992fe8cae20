"""The version of the prompt set: what the judge is asked, as one number.

A baseline entry keeps it (among its fingerprints): a verdict recorded under other prompts is
not compared with today's. Bump :data:`PROMPTS_VERSION` by hand when a prompt's wording or
structure changes what a model is asked. ``tests/prompts/test_prompts_version.py`` pins a
digest of every prompt text of this package to the version, so a changed text fails the
suite until the version is bumped (or, for a change that asks nothing new, such as a typo,
until the new digest is listed under the same version).
"""

from __future__ import annotations

PROMPTS_VERSION = 1
"""Bumped by hand when a prompt text changes (see the module's docstring)."""
