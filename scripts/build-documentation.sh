#!/usr/bin/env bash
# Builds the DocC documentation of the library and of its test kit with swift-docc-plugin, and
# fails if DocC warns about anything (an unresolved symbol link, a malformed article). Warnings
# SwiftPM prints about dependencies' files while building are not DocC's and are let through.
# The archives land in .build/plugins/Swift-DocC/outputs/.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for target in AIFNetworking AIFNetworkingTesting; do
    swift package --disable-sandbox generate-documentation --target "$target" > "$log" 2>&1 || { cat "$log" >&2; exit 1; }
    # DocC's own diagnostics come between "Building documentation for" and the archive's path.
    if sed -n '/Building documentation for/,/Generated documentation archive/p' "$log" | grep -E "(warning|error):" >&2; then
        echo "error: the documentation of $target has warnings (above)" >&2
        exit 1
    fi
    grep -q "Generated documentation archive" "$log" || { cat "$log" >&2; echo "error: no documentation archive for $target" >&2; exit 1; }
    echo "Documentation of $target built without warnings"
done
echo "Archives: .build/plugins/Swift-DocC/outputs/"
