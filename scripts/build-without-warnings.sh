#!/usr/bin/env bash
# Builds the package and its tests and fails if the compiler warned about any of the project's
# own files (dependencies' warnings are theirs). Usage: build-without-warnings.sh [swift build args]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build --build-tests "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] || exit "$status"
if grep -E "^$root/(Sources|Tests|Samples)/[^ ]*: warning:" "$log" | sort -u | grep .; then
    echo "error: the build has warnings in the project's own sources (above); the project builds warning-free" >&2
    exit 1
fi
