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
    # A digest last: a CI summary keeps only the log's tail, where a whole report's last lines
    # are thread-creation frames. Each report's warning, the top frames of every access it
    # names, and its summary line.
    printf '\n==== digest (each report: its accesses, top frames first)\n'
    for report in $reports; do
        printf -- '-- %s\n' "$(basename "$report")"
        awk '/WARNING:|SUMMARY:/ { print; next }
             /^ *Thread T/ { print; frames = 6; next }
             /^ *(Write|Read|Previous|Atomic|Location|Mutex)/ { print; frames = 0; next }
             /^ *#[0-9]+ / { if (frames < 6) print substr($0, 1, 240); frames++ }' "$report"
    done
    printf '\nerror: %s sanitizer report(s) above\n' "$(printf '%s\n' "$reports" | wc -l)" >&2
    [ "$status" -ne 0 ] || status=1
fi
exit "$status"
