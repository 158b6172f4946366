#!/usr/bin/env bash
# Builds the benchmark in release mode and runs the side-by-side comparison.
set -euo pipefail
cd "$(dirname "$0")"
# SwiftPM 6.3 keeps its build plan when a file is added to or removed from the library this
# package depends on by path, and the build then fails on the missing or stale file list: the
# plan is made afresh each time (a few seconds; what was compiled is kept).
rm -f .build/release.yaml
swift build -c release --product TransportBench
exec .build/release/TransportBench compare "$@"
