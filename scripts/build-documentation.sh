#!/usr/bin/env bash
# Builds the DocC documentation of the transport, the library and its test kit with
# swift-docc-plugin, as one combined archive (so that the library's pages link to the
# transport's, with a leading slash: ``/AIFTransport/CurlTransport``), and fails if DocC warns
# about anything (an unresolved symbol link, a malformed article). Warnings SwiftPM prints about dependencies'
# files while building are not DocC's and are let through. The archive lands in
# .build/plugins/Swift-DocC/outputs/. The plugin builds in the package's default build folder
# (.build): with `make test`'s sanitized build in .build-tsan, that is a build of its own
# (Hummingbird's and SwiftNIO's graph, which the plugin builds for the test kit whatever its
# traits; about 3 minutes from clean), shared with `make demo` and `make test-plain`.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
targets=(AIFTransport AIFServices AIFNetworking AIFNetworkingTesting)
swift package --disable-sandbox generate-documentation --enable-experimental-combined-documentation \
    "${targets[@]/#/--target=}" > "$log" 2>&1 || { cat "$log" >&2; exit 1; }
# DocC's own diagnostics come after the first "Building documentation for" line.
if sed -n '/Building documentation for/,$p' "$log" | grep -E "(warning|error):" >&2; then
    echo "error: the documentation has warnings (above)" >&2
    exit 1
fi
grep -q "Generated combined documentation archive" "$log" || { cat "$log" >&2; echo "error: no combined documentation archive" >&2; exit 1; }
echo "Documentation of ${targets[*]} built without warnings"
echo "Archive: .build/plugins/Swift-DocC/outputs/"
