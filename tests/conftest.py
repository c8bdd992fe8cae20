"""Shared fixtures for the whole test suite."""

pytest_plugins = ["tests.support.openai_fixtures"]
