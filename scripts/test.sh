#!/usr/bin/env bash
# Install pytest-karenina with its test dependencies, then run the test suite.
# README.md and .ci/run both call this script, so they cannot drift apart.
set -euo pipefail
cd "$(dirname "$0")/.."

# torch first, as a CPU build: sentence-transformers (the `embeddings` extra) would
# otherwise pull torch's CUDA wheels from the public index, several gigabytes. The CPU build
# comes from PyTorch's own wheel index; where that index cannot be reached, from the index
# pip is configured with (a mirror or a local wheelhouse may carry a CPU build).
TORCH="torch==2.13.0"
CPU_INDEX="https://download.pytorch.org/whl/cpu"
if ! python3 -m pip install --quiet --timeout 10 --retries 0 --index-url "$CPU_INDEX" "$TORCH" 2>/dev/null; then
    echo "scripts/test.sh: $CPU_INDEX not reachable; installing $TORCH from the configured index" >&2
    python3 -m pip install --quiet "$TORCH"
fi
python3 -m pip install --quiet -e ".[dev]"
python3 -m pytest "$@"
