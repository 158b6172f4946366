#!/usr/bin/env bash
# Prints the benchmark's host-independent figures as one line:
#
#     COUNTS instructions/request libcurl-c=59312 transport=94784 … syscalls/request libcurl-c=4.0 …
#
# For each client TransportProfile drives without an async `main` (valgrind cannot follow one):
# user-space instructions a request (callgrind, REQUESTS requests minus a run of 300, so that
# start-up cancels out) and system calls a request (strace -f -c, SYSCALL_REQUESTS minus 300),
# at concurrency 16 against `TransportBench serve` on a free loopback port. The figures do not
# depend on how fast the host is, so they show a change's cost where wall-clock ratios are noise.
#
# `libcurl-c-same-wire` is the C loop sending the transport's two default header lines too
# (`User-Agent`, `Accept-Encoding`): the same request byte for byte, so that the ratios to it
# count the transport's own work, and those to `libcurl-c` also what libcurl spends writing
# the transport's longer request. A second line gives those ratios:
#
#     COUNT-RATIOS transport/libcurl-c=1.50 transport/libcurl-c-same-wire=1.30 …
#
# Usage: counts.sh [CLIENT…]   (default: libcurl-c libcurl-c-same-wire transport transport-async transport-stream manager manager-async)
# Run after `swift build -c release --product TransportBench --product TransportProfile`.
set -euo pipefail
cd "$(dirname "$0")"
clients=("$@")
[ ${#clients[@]} -gt 0 ] || clients=(libcurl-c libcurl-c-same-wire transport transport-async transport-stream manager manager-async)
requests=${REQUESTS:-3300}
syscall_requests=${SYSCALL_REQUESTS:-2300}
profile=.build/release/TransportProfile
bench=.build/release/TransportBench
for tool in valgrind strace strip python3; do
    command -v "$tool" > /dev/null || { echo "counts.sh: $tool is not installed (make bench installs it)" >&2; exit 1; }
done

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bench" serve --port "$port" > /dev/null 2>&1 &
server=$!
scratch=$(mktemp -d)
trap 'kill $server 2> /dev/null || true; rm -rf "$scratch"' EXIT
url="http://127.0.0.1:$port/small.json"
# valgrind gives up on the DWARF of Swift's release builds: it reads a copy without it.
strip --strip-debug -o "$scratch/TransportProfile" "$profile"
# The server is up within a few seconds; give up after ten.
for _ in $(seq 1 100); do
    curl -sf -o /dev/null "$url" && break
    sleep 0.1
done
curl -sf -o /dev/null "$url" || { echo "counts.sh: the server on port $port did not answer" >&2; exit 1; }

# Instructions of one run of CLIENT with COUNT requests.
instructions() {
    rm -f "$scratch/callgrind.out"
    valgrind --tool=callgrind --callgrind-out-file="$scratch/callgrind.out" "$scratch/TransportProfile" "$1" "$url" 16 "$2" > "$scratch/valgrind.log" 2>&1 || true
    local count
    count=$(awk '/^(summary|totals):/ { print $2; exit }' "$scratch/callgrind.out" 2> /dev/null || true)
    [ -n "$count" ] || { echo "counts.sh: callgrind could not run $1:" >&2; tail -5 "$scratch/valgrind.log" >&2; exit 1; }
    echo "$count"
}

# System calls of one run of CLIENT with COUNT requests, every thread's.
syscalls() {
    strace -f -c -o "$scratch/strace.out" "$profile" "$1" "$url" 16 "$2" > /dev/null 2>&1
    local count
    count=$(awk '$NF == "total" { print $4; exit }' "$scratch/strace.out")
    [ -n "$count" ] || { echo "counts.sh: strace could not count $1" >&2; exit 1; }
    echo "$count"
}

instruction_parts=()
syscall_parts=()
declare -A per_request=()
for client in "${clients[@]}"; do
    big=$(instructions "$client" "$requests")
    small=$(instructions "$client" 300)
    per_request[$client]=$(( (big - small) / (requests - 300) ))
    instruction_parts+=("$client=${per_request[$client]}")
    big=$(syscalls "$client" "$syscall_requests")
    small=$(syscalls "$client" 300)
    syscall_parts+=("$client=$(awk -v big="$big" -v small="$small" -v n=$((syscall_requests - 300)) 'BEGIN { printf "%.1f", (big - small) / n }')")
done
echo "COUNTS instructions/request ${instruction_parts[*]} syscalls/request ${syscall_parts[*]}"

# Each Swift client's instructions over each C reference that was counted.
ratio_parts=()
for client in "${clients[@]}"; do
    case "$client" in libcurl-c*) continue ;; esac
    for reference in libcurl-c libcurl-c-same-wire; do
        [ -n "${per_request[$reference]:-}" ] || continue
        ratio_parts+=("$client/$reference=$(awk -v a="${per_request[$client]}" -v b="${per_request[$reference]}" 'BEGIN { printf "%.2f", a / b }')")
    done
done
[ ${#ratio_parts[@]} -eq 0 ] || echo "COUNT-RATIOS ${ratio_parts[*]}"
