"""Test support code shared across test packages (servers, fixtures)."""
