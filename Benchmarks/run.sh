#!/usr/bin/env bash
# Builds the benchmark in release mode and runs the side-by-side comparison.
set -euo pipefail
cd "$(dirname "$0")"
swift build -c release --product TransportBench
exec .build/release/TransportBench compare "$@"
