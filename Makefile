# The project's commands. `make demo` and `make test` are the two the README opens with; each
# installs the Debian packages it needs first (only the missing ones).

SWIFT ?= swift
# The package's optional parts, each behind a trait, which the samples and tests use too: the disk
# cache (GRDB), the test kit's in-process server (Hummingbird), the metrics and tracing
# observers (swift-metrics, swift-distributed-tracing), YAML defines (Yams) and typed interfaces
# (their macros: swift-syntax, about a minute and a half of each clean build, plain and TSan), the
# lifecycle service (swift-service-lifecycle) and the aif command line (swift-argument-parser).
TRAITS := --traits DiskCache,TestServer,Metrics,Tracing,YAML,Interfaces,OpenAPI,Lifecycle,CommandLineTool
# SwiftPM 6.3 passes the traits to the compiler as -D flags in an order that follows Swift's
# per-process hash seed, so it differs from one run of SwiftPM to the next: every `swift build` or
# `swift test` then saw new command lines and recompiled the package and its tests (about 2
# minutes of each warm `make test`, twice). A fixed seed keeps the order, and the builds warm.
# (The test processes inherit it: their hashing is the same from run to run.)
export SWIFT_DETERMINISTIC_HASHING := 1
# The library and its samples: libcurl (OpenSSL flavour) and libcrypto headers.
BUILD_PACKAGES := libcurl4-openssl-dev libssl-dev pkg-config
# The tests also generate certificates with openssl and gzip fixtures with gzip, pin a process
# to one CPU and make mount namespaces with util-linux, read multipart bodies back with Python's
# own parser, and run the curl command `aif call --curl` prints; the disk cache's tests build
# GRDB on the system's SQLite. A test run still going at its deadline prints its threads with gdb.
TEST_PACKAGES := $(BUILD_PACKAGES) openssl gzip util-linux python3 curl libsqlite3-dev gdb
# The benchmark adds nginx as the common server (and pins cores with taskset, as the tests do),
# counts instructions and system calls a request with valgrind and strace, and drives the server
# sample with wrk, sampling where its CPU goes with perf.
BENCH_PACKAGES := $(TEST_PACKAGES) nginx-light valgrind strace binutils wrk linux-perf

.PHONY: api-baseline demo demo-mock demo-shop transport-sample openapi-client docs install test test-plain test-tsan run-tsan test-asan count-socket-free soak fuzz bench build clean

## Runs the shop sample against the demo shop servers it starts in-process, then the hub sample
## (a client for a GitHub-like API) against the demo hub, then the OpenAPI sample (a generated
## client for the demo shop, through the shop service and on libcurl alone), then the server
## sample (a Hummingbird app calling a backend of its own, briefly, then shut down gracefully).
demo:
	@scripts/install-system-packages.sh $(BUILD_PACKAGES) libsqlite3-dev
	$(SWIFT) run $(TRAITS) ShopSample
	$(SWIFT) run $(TRAITS) HubSample
	$(SWIFT) run $(TRAITS) OpenAPISample
	$(SWIFT) run $(TRAITS) ServerSample

## Runs the shop sample from its fixtures alone (the service's mock environment), no server.
demo-mock:
	@scripts/install-system-packages.sh $(BUILD_PACKAGES) libsqlite3-dev
	$(SWIFT) run $(TRAITS) ShopSample --mock

## Runs the demo shop on its own (127.0.0.1:8080 and 8081) until interrupted: the quick start's server.
demo-shop:
	@scripts/install-system-packages.sh $(BUILD_PACKAGES) libsqlite3-dev
	$(SWIFT) run $(TRAITS) DemoShop

## Writes the OpenAPI sample's client again from Samples/OpenAPISample/openapi.yaml (after a
## change to the document): swift-openapi-generator 1.14.3, built in a scratch package of its own.
openapi-client:
	scripts/generate-openapi-client.sh

## Installs the aif command in $(PREFIX)/bin (/usr/local/bin by default; DESTDIR for a staging
## root): a release build with the command line's trait and YAML's.
PREFIX ?= /usr/local
AIF_TRAITS := --traits CommandLineTool,YAML
install:
	@scripts/install-system-packages.sh $(BUILD_PACKAGES)
	$(SWIFT) build -c release $(AIF_TRAITS) --product aif
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 0755 "$$($(SWIFT) build -c release $(AIF_TRAITS) --show-bin-path)/aif" "$(DESTDIR)$(PREFIX)/bin/aif"
	@echo "aif installed in $(DESTDIR)$(PREFIX)/bin"

## Builds the DocC documentation of the library and its test kit, failing on any warning.
docs:
	@scripts/install-system-packages.sh $(BUILD_PACKAGES)
	scripts/build-documentation.sh

## Runs the transport-level sample (plain HTTP requests, no services) against the demo shop.
transport-sample:
	@scripts/install-system-packages.sh $(BUILD_PACKAGES) libsqlite3-dev
	$(SWIFT) run $(TRAITS) TransportSample

## The whole test suite, under the thread sanitizer, with the checks around it: a package
## depending on the core resolves swift-log alone, the README's and the articles' code compiles,
## the build has no warning, the public API keeps the baseline's declarations unless CHANGELOG.md
## names the break (scripts/check-api.sh), the documentation builds without one.
##
## The suite runs once, under the thread sanitizer — the same assertions as a plain run, with every
## data race reported too — from one build of everything (the samples and tools included, for
## the warnings check). It ran plainly as well, from a second build of the whole dependency graph
## (SwiftNIO, Hummingbird, BoringSSL, swift-syntax, GRDB): 12 of a clean `make test`'s 35 minutes
## for a run that checked nothing the sanitized one does not. `make test-plain` runs it plainly.
test:
	@scripts/install-system-packages.sh $(TEST_PACKAGES)
	scripts/check-consumer-dependencies.sh
	scripts/extract-readme-snippets.sh
	scripts/build-without-warnings.sh --sanitize=thread --scratch-path .build-tsan $(TRAITS)
	TRAITS="$(TRAITS)" scripts/check-api.sh
	$(MAKE) --no-print-directory run-tsan
	scripts/build-documentation.sh

# The tests run one at a time (`--no-parallel`, which Swift Testing honours too): many promise
# that something ends at once or at its deadline, and with every test of the suite running
# together on two cores under the thread sanitizer, each transport's loop thread got so little of
# the machine that loads were told seconds late (six such failures in one parallel TSan run of
# the suite, none in a serial run). Suites that keep both cores busy for seconds (thousands of
# transfers in flight), and those whose bounds are a tenth of a second (timeouts told on time
# under load), run on their own after the rest.
ALONE := CurlTransportScaleTests|CurlTransportTimeKeepingTests

# Each test run has a deadline, about four times what it takes on this machine (two cores): a run
# still going then is stopped and its threads printed (scripts/with-deadline.sh), so that a hang
# is a failure that says where it stood, not a CI run that times out with its last lines unprinted.
DEADLINE = scripts/with-deadline.sh $(1)

## Makes the current commit the public API's baseline (after cutting a release; see CHANGELOG.md).
api-baseline:
	@scripts/install-system-packages.sh $(BUILD_PACKAGES) python3
	TRAITS="$(TRAITS)" scripts/check-api.sh --record

## The suite without the sanitizer (a build of its own, in .build).
test-plain:
	@scripts/install-system-packages.sh $(TEST_PACKAGES)
	scripts/extract-readme-snippets.sh
	scripts/build-without-warnings.sh $(TRAITS)
	$(call DEADLINE,600) $(SWIFT) test --skip-build --no-parallel $(TRAITS) --skip '$(ALONE)'
	$(call DEADLINE,300) $(SWIFT) test --skip-build --no-parallel $(TRAITS) --filter '$(ALONE)'

# .tsan/suppressions.txt holds two investigated entries (see the comments there); halt_on_error
# stays off so that every report is printed, and any report still fails the run. Reports go to
# files and are printed after the tests (scripts/with-sanitizer-reports.sh), so that the end of
# the log shows them whole.
# `make test-tsan` builds what the sanitized run needs — the tests and the programs they start
# (the command-line tool, the test helper, the demo shop, the shop and OpenAPI samples, the fuzz
# targets' replay); `make test` builds everything sanitized, to check it for warnings too.
TSAN_PRODUCTS := AIFNetworkingPackageTests aif aif-test-helper DemoShop ShopSample OpenAPISample aif-fuzz
TSAN_RUN = TSAN_OPTIONS="suppressions=$(CURDIR)/.tsan/suppressions.txt log_path=$(CURDIR)/.build-tsan/reports/$(1)/tsan $(TSAN_OPTIONS)"
## The suite under the thread sanitizer alone (what `make test` runs, without its other checks).
test-tsan:
	@scripts/install-system-packages.sh $(TEST_PACKAGES)
	scripts/extract-readme-snippets.sh
	@for product in $(TSAN_PRODUCTS); do echo "$(SWIFT) build --sanitize=thread --scratch-path .build-tsan $(TRAITS) --product $$product"; \
	    $(SWIFT) build --sanitize=thread --scratch-path .build-tsan $(TRAITS) --product $$product || exit 1; done
	$(MAKE) --no-print-directory run-tsan

# The sanitized suite, from a build made already.
run-tsan:
	scripts/with-sanitizer-reports.sh .build-tsan/reports/suite $(call DEADLINE,1200) env $(call TSAN_RUN,suite) $(SWIFT) test --skip-build --no-parallel --sanitize=thread --scratch-path .build-tsan $(TRAITS) --skip '$(ALONE)'
	scripts/with-sanitizer-reports.sh .build-tsan/reports/alone $(call DEADLINE,600) env $(call TSAN_RUN,alone) $(SWIFT) test --skip-build --no-parallel --sanitize=thread --scratch-path .build-tsan $(TRAITS) --filter '$(ALONE)'

## How many tests make no socket call: the plain suite once under strace, each socket call
## charged to the test running (scripts/count-socket-free-tests.sh).
count-socket-free:
	@scripts/install-system-packages.sh $(TEST_PACKAGES)
	scripts/build-without-warnings.sh $(TRAITS)
	scripts/count-socket-free-tests.sh $(TRAITS)

## The whole suite under AddressSanitizer (not part of `make test`). Leak detection is off: in
## Swift, LeakSanitizer reports memory that is still referenced — a weak reference's side table
## (pointed to from tagged reference-count bits), a buffer held by an enum payload with its tag in
## the pointer's spare bits — and its exit status fails the tests' child processes. Leaks are
## measured instead as resident memory over 100,000 loads (`make bench`, `make soak`).
test-asan:
	@scripts/install-system-packages.sh $(TEST_PACKAGES)
	scripts/extract-readme-snippets.sh
	ASAN_OPTIONS="detect_leaks=0 $(ASAN_OPTIONS)" $(SWIFT) test --no-parallel --sanitize=address --scratch-path .build-asan $(TRAITS) --skip '$(ALONE)'
	ASAN_OPTIONS="detect_leaks=0 $(ASAN_OPTIONS)" $(SWIFT) test --skip-build --no-parallel --sanitize=address --scratch-path .build-asan $(TRAITS) --filter '$(ALONE)'

## 100,000 loads, 256 at a time, through the manager stack against the demo shop and a fault
## server (release build, loopback only, at most 20 minutes): fails unless every load ended exactly
## once, memory stayed flat and every descriptor came back. Its last line is the `SOAK …` summary.
soak:
	@scripts/install-system-packages.sh $(BUILD_PACKAGES) libsqlite3-dev
	$(SWIFT) build -c release $(TRAITS) --product aif-soak
	.build/release/aif-soak --loads 100000 --concurrency 256 --minutes 20

# `make fuzz`: each libFuzzer target (Tests/Fuzz) for FUZZ_SECONDS, AddressSanitizer on, from the
# seed corpus in Tests/Fuzz/Corpus/TARGET (new inputs go to .build-fuzz/corpus, findings to
# .build-fuzz/findings). A finding stops the run; copy it into the corpus folder and fix it — the
# tests replay every corpus file.
FUZZ_SECONDS ?= 300
FUZZ_TARGETS := json config headers envelope defines yaml-defines
fuzz:
	@scripts/install-system-packages.sh $(BUILD_PACKAGES)
	$(SWIFT) build --product aif-fuzz --scratch-path .build-fuzz --traits YAML -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
	@for target in $(FUZZ_TARGETS); do \
		mkdir -p .build-fuzz/corpus/$$target .build-fuzz/findings; rm -f .build-fuzz/findings/$$target-*; \
		echo "== $$target, $(FUZZ_SECONDS) s"; \
		LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/Fuzz/lsan-suppressions.txt AIF_FUZZ_TARGET=$$target \
			.build-fuzz/debug/aif-fuzz .build-fuzz/corpus/$$target Tests/Fuzz/Corpus/$$target \
			-max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix=.build-fuzz/findings/$$target- 2>&1 | grep -E "^#[0-9]+.*(DONE|pulse)|stat::|ERROR|SUMMARY|Test unit written" || true; \
		if ls .build-fuzz/findings/$$target-* > /dev/null 2>&1; then echo "error: $$target found a fault (.build-fuzz/findings)"; exit 1; fi; \
	done

## Builds the benchmark package in release mode and runs the side-by-side comparison.
bench:
	@scripts/install-system-packages.sh $(BENCH_PACKAGES)
	cd Benchmarks && ./run.sh

build:
	@scripts/install-system-packages.sh $(BUILD_PACKAGES) libsqlite3-dev
	$(SWIFT) build $(TRAITS)

clean:
	rm -rf .build .build-tsan .build-asan .build-fuzz .build-docs Benchmarks/.build
