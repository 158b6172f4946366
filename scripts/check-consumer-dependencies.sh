#!/usr/bin/env bash
# Resolves a throw-away package that depends on the AIFNetworking library product only, and
# fails unless it resolves exactly the library's own dependencies: what the samples, the demo
# server, the command-line tool and the tests need must stay out of a user's graph.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
expected="swift-log"

consumer=$(mktemp -d)
trap 'rm -rf "$consumer"' EXIT
mkdir -p "$consumer/Sources/Consumer"
cat > "$consumer/Package.swift" <<MANIFEST
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Consumer",
    dependencies: [.package(path: "$root")],
    targets: [.executableTarget(name: "Consumer", dependencies: [.product(name: "AIFNetworking", package: "$(basename "$root")")])]
)
MANIFEST
printf 'import AIFNetworking\nprint(HTTPMethod.get)\n' > "$consumer/Sources/Consumer/main.swift"
if ! log=$(cd "$consumer" && swift package resolve 2>&1); then
    echo "$log" >&2
    echo "error: the consumer package did not resolve" >&2
    exit 1
fi
resolved=$(grep -o '"identity" : "[^"]*"' "$consumer/Package.resolved" | sed 's/.*: "\(.*\)"/\1/' | sort | tr '\n' ' ' | sed 's/ $//')
if [ "$resolved" != "$expected" ]; then
    echo "error: a package depending only on the AIFNetworking library resolves: $resolved (expected: $expected)" >&2
    exit 1
fi
echo "A package depending only on the AIFNetworking library resolves: $resolved"
