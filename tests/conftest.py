"""Shared fixtures for the whole test suite."""

pytest_plugins = ["pytester", "tests.support.openai_fixtures"]
