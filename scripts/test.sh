#!/usr/bin/env bash
# Install pytest-karenina with its test dependencies, then run the test suite.
# README.md and .ci/run both call this script, so they cannot drift apart.
set -euo pipefail
cd "$(dirname "$0")/.."

# torch first, pinned to the CPU build: sentence-transformers (the `embeddings`
# extra) would otherwise pull the CUDA wheels, several gigabytes.
python3 -m pip install --quiet torch==2.13.0
python3 -m pip install --quiet -e ".[dev]"
python3 -m pytest "$@"
