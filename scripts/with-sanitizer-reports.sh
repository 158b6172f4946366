#!/usr/bin/env bash
# Runs a command whose processes write their sanitizer reports into a folder (the sanitizer's
# `log_path`), then prints every report at the end of the output and fails if there was one.
# The reports come last so that a log read from its tail (a CI summary) shows them whole, not
# only "ThreadSanitizer: reported 1 warnings" after thousands of lines of test output.
# Usage: with-sanitizer-reports.sh FOLDER COMMAND [ARGS...]
set -uo pipefail
folder=$1
shift
rm -rf "$folder"
mkdir -p "$folder"
"$@"
status=$?
reports=$(find "$folder" -type f | sort)
if [ -n "$reports" ]; then
    for report in $reports; do
        printf '\n==== sanitizer report: %s\n' "$(basename "$report")"
        cat "$report"
    done
    printf '\nerror: %s sanitizer report(s) above\n' "$(printf '%s\n' "$reports" | wc -l)" >&2
    [ "$status" -ne 0 ] || status=1
fi
exit "$status"
