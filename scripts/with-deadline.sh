#!/usr/bin/env bash
# Runs a command with a deadline. A command still running at its deadline is not left to hang a
# CI run: the output its processes hold back is flushed and every thread of each of them is
# printed (gdb backtraces), on standard output like the tests' own lines, so that the log's tail
# says where it stood; then the processes are stopped and the exit status is 124.
# Usage: with-deadline.sh SECONDS COMMAND [ARGS...]
set -uo pipefail
seconds=$1
shift

"$@" &
leader=$!

# The command's process and all its descendants (swift test starts its test process in a process
# group of its own, so the tree is walked rather than a group).
tree() {
    local pids=$1 all=$1 children
    while [ -n "$pids" ]; do
        children=$(ps -e -o pid=,ppid= | awk -v parents=" $pids " 'index(parents, " " $2 " ") { printf "%s ", $1 }')
        all="$all $children"
        pids=$(echo $children)
    done
    echo $all
}

deadline=$((SECONDS + seconds))
while kill -0 "$leader" 2> /dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
        printf '\nerror: still running after %s s: %s\n' "$seconds" "$*"
        pids=$(tree "$leader")
        for pid in $pids; do
            printf '\n==== threads of process %s: %s\n' "$pid" "$(tr '\0' ' ' < "/proc/$pid/cmdline" 2> /dev/null | cut -c1-200)"
            if command -v gdb > /dev/null; then
                # The process's buffered output first (a test process's last lines wait in its
                # stdio buffer while its output is a pipe), then its threads' backtraces.
                timeout 120 gdb -p "$pid" -batch -nx -ex 'set pagination off' -ex 'call (int) fflush(0)' -ex 'thread apply all bt 25' 2>&1 \
                    | grep -E '^(Thread|#)'
            fi
        done
        # The innermost processes first: their parents (swift test holds the test process's
        # last lines) then print what they had before they are stopped too.
        for pid in $(echo $pids | tr ' ' '\n' | tac); do
            kill -KILL "$pid" 2> /dev/null
            sleep 2
        done
        wait "$leader" 2> /dev/null
        exit 124
    fi
    sleep 1
done
wait "$leader"
