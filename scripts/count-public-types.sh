#!/usr/bin/env bash
# Counts the top-level public types of the core modules (AIFTransport, AIFServices, AIFNetworking)
# that are not SPI: the 1.0 surface's budget (issue 63) is 60. `--list` prints them.
set -euo pipefail
cd "$(dirname "$0")/.."
list=$(awk '
    FNR == 1 { spi = 0 }
    /^@_spi\(/ { spi = 1; next }
    /^(public|open) (final )?(struct|class|enum|protocol|typealias|actor) / {
        if (!spi) { match($0, /(struct|class|enum|protocol|typealias|actor) [A-Za-z0-9_]+/); print FILENAME ": " substr($0, RSTART, RLENGTH) }
    }
    !/^@/ { spi = 0 }
' $(find Sources/AIFTransport Sources/AIFServices Sources/AIFNetworking -name '*.swift' | LC_ALL=C sort))
if [ "${1:-}" = "--list" ]; then echo "$list"; fi
echo "$(echo "$list" | grep -c .) public top-level types in the core modules"
