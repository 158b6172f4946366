#!/usr/bin/env bash
# Builds the benchmark and the server sample in release mode, runs the side-by-side comparison,
# then prints the exact counts (instructions and system calls a request; see counts.sh), and
# appends the run to history/runs.jsonl and draws history/ratios.svg from it.
set -euo pipefail
cd "$(dirname "$0")"
# As in the Makefile: a fixed hash seed keeps the order of the trait flags SwiftPM passes, without
# which every build sees new command lines and recompiles everything.
export SWIFT_DETERMINISTIC_HASHING=1
# SwiftPM 6.3 keeps its build plan when a file is added to or removed from the library this
# package depends on by path, and the build then fails on the missing or stale file list. The
# plan is made afresh only when the list of files changed since the last build: planning again
# recompiles everything (80 s here), keeping it costs two seconds when nothing changed.
files=$(cd .. && find Sources Package.swift Benchmarks/Sources -type f | LC_ALL=C sort | sha256sum)
if [ "$(cat .build/aif-file-list 2> /dev/null)" != "$files" ]; then rm -f .build/release.yaml; fi
swift build -c release --product TransportBench
swift build -c release --product TransportProfile
mkdir -p .build && echo "$files" > .build/aif-file-list
# The server sample, as its users build it, for the server comparison (a release build of the
# root package with the traits the sample needs; the same file-list check keeps its plan).
sample_traits=(--traits Lifecycle,TestServer,DiskCache)
if [ "$(cat ../.build/aif-bench-file-list 2> /dev/null)" != "$files" ]; then rm -f ../.build/release.yaml; fi
(cd .. && swift build -c release "${sample_traits[@]}" --product ServerSample)
sample="$(cd .. && swift build -c release "${sample_traits[@]}" --show-bin-path)/ServerSample"
echo "$files" > ../.build/aif-bench-file-list
mkdir -p .build
log=.build/last-run.log
{ .build/release/TransportBench compare --server-sample "$sample" "$@"; ./counts.sh; } 2>&1 | tee "$log"
# The run's row in the history, and the picture drawn again (see README.md, History). A tree with
# changes to the library or the benchmark not yet committed is marked so.
commit=$(git -C .. rev-parse --short HEAD)
git -C .. diff --quiet HEAD -- Sources Package.swift Benchmarks/Sources || commit="$commit+changes"
.build/release/TransportBench history append "$log" --commit "$commit" --arguments "$*"
.build/release/TransportBench history draw
