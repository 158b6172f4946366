#!/usr/bin/env bash
# Resolves throw-away packages that depend on the library's products as a user's would, and
# fails unless each resolves exactly what those products need: the core library alone brings
# swift-log only (what the samples, the demo server, the command-line tool and the tests need
# stays out of a user's graph); the disk cache, with the `DiskCache` trait, adds GRDB; the test
# kit adds nothing without its `TestServer` trait, and Hummingbird's graph with it; the metrics
# and tracing observers add swift-metrics and swift-distributed-tracing with their traits; YAML
# defines add Yams, typed interfaces swift-syntax, and the OpenAPI transports
# swift-openapi-runtime (with swift-http-types), and the lifecycle service
# swift-service-lifecycle (with what it builds on), with theirs; the aif command line
# (`swift run aif` in a package depending on this one) adds swift-argument-parser with its.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# check DESCRIPTION TRAITS PRODUCTS EXPECTED — TRAITS and PRODUCTS are Swift list literals.
check() {
    local description=$1 traits=$2 products=$3 expected=$4
    local consumer
    consumer=$(mktemp -d)
    mkdir -p "$consumer/Sources/Consumer"
    cat > "$consumer/Package.swift" <<MANIFEST
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Consumer",
    dependencies: [.package(path: "$root", traits: $traits)],
    targets: [.executableTarget(name: "Consumer", dependencies: $products.map { .product(name: \$0, package: "$(basename "$root")") })]
)
MANIFEST
    printf 'import AIFNetworking\nprint(HTTPMethod.get)\n' > "$consumer/Sources/Consumer/main.swift"
    if ! log=$(cd "$consumer" && swift package resolve 2>&1); then
        echo "$log" >&2
        echo "error: the consumer package ($description) did not resolve" >&2
        rm -rf "$consumer"
        exit 1
    fi
    local resolved
    resolved=$(grep -o '"identity" : "[^"]*"' "$consumer/Package.resolved" | sed 's/.*: "\(.*\)"/\1/' | sort | tr '\n' ' ' | sed 's/ $//')
    rm -rf "$consumer"
    if [ "$resolved" != "$expected" ]; then
        echo "error: a package depending on $description resolves: $resolved (expected: $expected)" >&2
        exit 1
    fi
    echo "A package depending on $description resolves: $resolved"
}

# The consumers resolve at once (each mostly waits on git), each into a log of its own; the logs
# are printed in order, and any failure fails the script.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
index=0
run() {
    index=$((index + 1))
    ( check "$@" ) > "$logs/$index.out" 2>&1 &
}
run "the AIFNetworking library only" '[]' '["AIFNetworking"]' "swift-log"
run "the disk cache too (trait DiskCache)" '["DiskCache"]' '["AIFNetworking", "AIFNetworkingDiskCache"]' "grdb.swift swift-log"
run "the test kit without its server" '[]' '["AIFNetworking", "AIFNetworkingTesting"]' "swift-log"
run "the metrics observer (trait Metrics)" '["Metrics"]' '["AIFNetworking", "AIFNetworkingMetrics"]' "swift-log swift-metrics"
run "the tracing observer (trait Tracing)" '["Tracing"]' '["AIFNetworking", "AIFNetworkingTracing"]' "swift-distributed-tracing swift-log"
run "YAML defines (trait YAML)" '["YAML"]' '["AIFNetworking", "AIFNetworkingYAML"]' "swift-log yams"
run "typed interfaces (trait Interfaces)" '["Interfaces"]' '["AIFNetworking", "AIFNetworkingInterfaces"]' "swift-log swift-syntax"
run "OpenAPI transports (trait OpenAPI)" '["OpenAPI"]' '["AIFNetworking", "AIFNetworkingOpenAPI"]' "swift-http-types swift-log swift-openapi-runtime"
run "the lifecycle service (trait Lifecycle)" '["Lifecycle"]' '["AIFNetworking", "AIFNetworkingLifecycle"]' "swift-async-algorithms swift-collections swift-log swift-service-lifecycle"
run "the library, with the aif command line for swift run aif (trait CommandLineTool)" '["CommandLineTool"]' '["AIFNetworking"]' "swift-argument-parser swift-log"
run "the test kit with its server (trait TestServer)" '["TestServer"]' '["AIFNetworking", "AIFNetworkingTesting"]' "async-http-client hummingbird swift-algorithms swift-asn1 swift-async-algorithms swift-atomics swift-certificates swift-collections swift-configuration swift-crypto swift-distributed-tracing swift-http-structured-headers swift-http-types swift-log swift-metrics swift-nio swift-nio-extras swift-nio-http2 swift-nio-ssl swift-nio-transport-services swift-numerics swift-service-context swift-service-lifecycle swift-system"
failed=0
wait_all() {
    local job
    for job in $(jobs -p); do wait "$job" || failed=1; done
}
wait_all
for i in $(seq 1 "$index"); do cat "$logs/$i.out"; done
exit "$failed"
