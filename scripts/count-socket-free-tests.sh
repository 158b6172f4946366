#!/usr/bin/env bash
# Counts the tests that make no socket system call — neither the library, nor a server of the
# test's, nor a program it starts: the plain suite (built already) runs once under strace, one
# test at a time, and each socket call is charged to the test that was running when it was made
# (a transfer still winding down from the test before is charged to the next, so the count errs
# towards "uses a socket").
# Usage: count-socket-free-tests.sh [swift test options, e.g. --traits …]
set -euo pipefail
scripts/install-system-packages.sh strace
log=$(mktemp)
trap 'rm -f "$log"' EXIT
strace -f --seccomp-bpf -e trace=write,socket,connect,sendto,recvfrom,accept4,sendmsg,recvmsg -e signal=none -s 160 -o "$log" \
    swift test --skip-build --no-parallel "$@" > /dev/null
awk '
    / write\(/ {
        if (match($0, /Test [A-Za-z0-9_]+(\([^)]*\))? started/)) {
            test = substr($0, RSTART + 5, RLENGTH - 13)
            if (!(test in seen)) { seen[test] = 1; order[++count] = test }
        }
        next
    }
    /^[0-9]+ +(socket|connect|sendto|recvfrom|accept4|sendmsg|recvmsg)\(/ && !/AF_NETLINK/ { if (test != "") used[test]++ }
    END {
        for (i = 1; i <= count; i++) if (!(order[i] in used)) free++
        printf "%d of %d tests made no socket call (%.0f%%)\n", free, count, 100 * free / count
    }
' "$log"
