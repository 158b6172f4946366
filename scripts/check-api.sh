#!/usr/bin/env bash
# The public API of the core modules (AIFTransport, AIFServices, AIFNetworking) against the
# baseline commit named in API/baseline, through `swift package diagnose-api-breaking-changes`.
#
#   scripts/check-api.sh            fails on a break the newest section of CHANGELOG.md does not
#                                   name under "### Breaking changes"
#   scripts/check-api.sh --record   makes the current commit the baseline (after cutting a
#                                   release): writes API/baseline and API/<module>.json.gz
#
# It reads a build made already (make test's: SCRATCH=.build-tsan SANITIZE=thread, the defaults),
# so that it costs an API dump and no second build. The baseline's API is kept in the repository
# (API/<module>.json.gz, swift-api-digester's dump of the baseline commit): SwiftPM would
# otherwise check the baseline out and build it again, without the package's traits, which the
# test support needs. TRAITS is the build's trait list (`--traits …`), as the Makefile gives it.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=${SCRATCH:-.build-tsan}
sanitize=${SANITIZE-thread}
traits=${TRAITS:---traits DiskCache,TestServer,Metrics,Tracing,YAML,Interfaces,OpenAPI,Lifecycle,CommandLineTool}
modules=(AIFTransport AIFServices AIFNetworking)
build_options=(--scratch-path "$scratch")
[ -z "$sanitize" ] || build_options+=(--sanitize "$sanitize")
# shellcheck disable=SC2206 # the trait flags are words
build_options+=($traits)
export SWIFT_DETERMINISTIC_HASHING=1

# swift-api-digester's dump of one module of the build, as SwiftPM makes a baseline's.
dump() {
    local module=$1 output=$2
    swift-api-digester -dump-sdk -compiler-style-diags -module "$module" -target "$(uname -m)-unknown-linux-gnu" \
        -I "$scratch/debug/Modules" -I Sources/CCurl -I Sources/COpenSSL -I "$scratch/checkouts/swift-log/Sources" \
        -o "$output" > "$output.log" 2>&1 || { cat "$output.log" >&2; return 1; }
    grep -q '"children"' "$output" || { echo "check-api: the dump of $module holds no declaration" >&2; cat "$output.log" >&2; return 1; }
}

# Keeps the public API in a dump: the digester's dump holds `package` declarations too (marked
# `isInternal`) and SPI ones (`spi_group_names`), which may change freely. A `package`
# initializer stays: the digester takes a designated initializer of an open class that the
# baseline lacks for one added to the public API.
public_only() {
    python3 - "$1" <<'PRUNE'
import json, sys
path = sys.argv[1]
with open(path) as f:
    dump = json.load(f)
def prune(node):
    node["children"] = [prune(child) for child in node.get("children", []) if not (child.get("isInternal") and child.get("declKind") != "Constructor") and not child.get("spi_group_names")]
    if not node["children"]:
        del node["children"]
    return node
dump["ABIRoot"] = prune(dump["ABIRoot"])
with open(path, "w") as f:
    json.dump(dump, f, indent=1, sort_keys=True)
PRUNE
}

if [ "${1:-}" = "--record" ]; then
    git diff --quiet HEAD -- Sources Package.swift || { echo "check-api: commit the sources first: the baseline is a commit" >&2; exit 1; }
    swift build "${build_options[@]}" --target AIFNetworking > /dev/null
    mkdir -p API
    for module in "${modules[@]}"; do
        dump "$module" "API/$module.json"
        rm -f "API/$module.json.log"
        public_only "API/$module.json"
        gzip -9n -f "API/$module.json"
    done
    git rev-parse HEAD > API/baseline
    echo "check-api: the baseline is now $(cat API/baseline); commit API/"
    exit 0
fi

baseline=$(tr -d ' \n' < API/baseline)
# Where SwiftPM looks for a baseline it need not build: <dir>/<commit>/<module>.json.
dir="$scratch/api-baselines"
mkdir -p "$dir/$baseline"
for module in "${modules[@]}"; do
    gunzip -c "API/$module.json.gz" > "$dir/$baseline/$module.json"
done
products=()
for module in "${modules[@]}"; do products+=(--products "$module"); done
log="$scratch/api-check.log"
status=0
swift package "${build_options[@]}" diagnose-api-breaking-changes "$baseline" "${products[@]}" --baseline-dir "$dir" > "$log" 2>&1 || status=$?
breaks=$(grep -o 'API breakage: .*' "$log" || true)
if [ $status -ne 0 ] && [ -z "$breaks" ]; then
    echo "check-api: diagnose-api-breaking-changes failed:" >&2
    tail -40 "$log" >&2
    exit 1
fi
[ -n "$breaks" ] || { echo "check-api: the public API keeps every declaration of the baseline ${baseline:0:7}"; exit 0; }

# The newest section's "### Breaking changes", up to the next heading.
named=$(awk '/^## /{ n++ } n == 1 && /^### /{ inside = ($0 ~ /^### Breaking changes/) ; next } n == 1 && inside' CHANGELOG.md)
unnamed=0
while IFS= read -r line; do
    # `API breakage: func APIManager.load(_:) has been removed`: the declaration's name, without
    # its argument labels, must be in the section (`APIManager.load`).
    name=$(sed -E 's/^API breakage: (accessor |associatedtype |case |class |constructor |enum |enumelement |func |import |protocol |struct |subscript |typealias |var |let |macro |operator )?([^ (]+).*/\2/' <<< "$line")
    # An accessor is named by its property (`accessor AIFHMACSigner.placement.Set()`).
    case "$line" in "API breakage: accessor "*) name=${name%.*} ;; esac
    # A change of type is named by the type it changed from (`ParameterValue` for `… has
    # return type change from AIFServices.ParameterValue to …`): naming a type that went names
    # every declaration that held it.
    from=$(sed -nE 's/.* from (.*) to .*/\1/p' <<< "$line" | grep -oE 'AIF[A-Za-z]+\.[A-Za-z_.]+' | sed -E 's/^AIF[A-Za-z]+\.//' || true)
    acknowledged=false
    grep -qF -- "$name" <<< "$named" && acknowledged=true
    for type in $from; do grep -qF -- "\`$type\`" <<< "$named" && acknowledged=true; done
    if ! $acknowledged; then
        echo "check-api: not in CHANGELOG.md's breaking changes: $line" >&2
        unnamed=$((unnamed + 1))
    fi
done <<< "$breaks"
if [ $unnamed -gt 0 ]; then
    echo "check-api: $unnamed break(s) of the public API against ${baseline:0:7} that CHANGELOG.md does not name; name each declaration under \"### Breaking changes\" in its newest section, or keep the API" >&2
    exit 1
fi
echo "check-api: $(wc -l <<< "$breaks") break(s) of the public API against ${baseline:0:7}, each named in CHANGELOG.md"
