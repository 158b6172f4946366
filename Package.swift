// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

/// Settings every Swift target of the package shares: Swift 6 mode is set package-wide below,
/// these turn on the upcoming features the project has adopted.
let sharedSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "AIFNetworking",
    platforms: [.macOS(.v15)],
    // The library is the core product, and its two lower layers are products too (`AIFTransport`
    // for plain HTTP, `AIFServices` for services without the engine); the disk cache, the test
    // kit, the two observers, YAML defines and the lifecycle service are optional ones, their
    // dependencies behind traits (GRDB behind `DiskCache`, the kit's Hummingbird server behind
    // `TestServer`, swift-metrics behind `Metrics`, swift-distributed-tracing behind `Tracing`,
    // Yams behind `YAML`, swift-syntax behind `Interfaces`, swift-openapi-runtime behind
    // `OpenAPI`, swift-service-lifecycle behind `Lifecycle`), so that only their users resolve
    // and build them. The command-line tool is a product too, so that a package depending on
    // this one can `swift run aif` — with the `CommandLineTool` trait, which brings
    // swift-argument-parser (and with `YAML`, to read YAML too); the samples,
    // the demo server and the tests are targets of this package only (`swift run ShopSample`). A
    // package that depends on the AIFNetworking library resolves and builds none of their
    // dependencies — only swift-log (scripts/check-consumer-dependencies.sh, run by `make test`,
    // checks it).
    products: [
        .executable(name: "aif", targets: ["aif"]),
        .library(name: "AIFNetworking", targets: ["AIFNetworking"]),
        .library(name: "AIFTransport", targets: ["AIFTransport"]),
        .library(name: "AIFServices", targets: ["AIFServices"]),
        .library(name: "AIFNetworkingDiskCache", targets: ["AIFNetworkingDiskCache"]),
        .library(name: "AIFNetworkingTesting", targets: ["AIFNetworkingTesting"]),
        .library(name: "AIFNetworkingMetrics", targets: ["AIFNetworkingMetrics"]),
        .library(name: "AIFNetworkingTracing", targets: ["AIFNetworkingTracing"]),
        .library(name: "AIFNetworkingYAML", targets: ["AIFNetworkingYAML"]),
        .library(name: "AIFNetworkingInterfaces", targets: ["AIFNetworkingInterfaces"]),
        .library(name: "AIFNetworkingOpenAPI", targets: ["AIFNetworkingOpenAPI"]),
        .library(name: "AIFNetworkingLifecycle", targets: ["AIFNetworkingLifecycle"]),
    ],
    traits: [
        .trait(name: "DiskCache", description: "The AIFNetworkingDiskCache product (SQLite through GRDB)."),
        .trait(name: "TestServer", description: "The AIFNetworkingTesting product's in-process HTTP server (Hummingbird)."),
        .trait(name: "Metrics", description: "The AIFNetworkingMetrics product (swift-metrics)."),
        .trait(name: "Tracing", description: "The AIFNetworkingTracing product (swift-distributed-tracing)."),
        .trait(name: "YAML", description: "The AIFNetworkingYAML product: API defines written in YAML (Yams)."),
        .trait(name: "Interfaces", description: "The AIFNetworkingInterfaces product: typed API interfaces declared with macros (swift-syntax)."),
        .trait(name: "OpenAPI", description: "The AIFNetworkingOpenAPI product: transports for swift-openapi-generator clients (swift-openapi-runtime)."),
        .trait(name: "Lifecycle", description: "The AIFNetworkingLifecycle product: a proxy's graceful shutdown run by swift-service-lifecycle."),
        .trait(name: "CommandLineTool", description: "The aif executable's command line (swift-argument-parser); with YAML, it reads YAML too."),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // `swift package generate-documentation` (make docs); no target uses it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        // Only the optional observers use these: metrics and tracing, each in a product of its own.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // Only the optional YAML defines use Yams.
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        // Only the optional typed interfaces use swift-syntax, for their macros (602 is Swift 6.2's,
        // 603 Swift 6.3's).
        .package(url: "https://github.com/swiftlang/swift-syntax.git", "602.0.0"..<"604.0.0"),
        // Only the optional OpenAPI transports use swift-openapi-runtime.
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4", traits: []),
        // Only the optional lifecycle product uses swift-service-lifecycle (Hummingbird, below, does too).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Only the optional disk cache uses GRDB (SQLite).
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // The test kit's server (with its trait), the demo server, the samples and the tests use
        // these; the library does not.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // The transport: libcurl's loop, requests and responses, TLS, transfers, and the support
        // they share. It knows nothing of the layers above.
        .target(
            name: "AIFTransport",
            dependencies: [
                "CCurl",
                "COpenSSL",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Above the transport: services and their environments, the request builder, signing,
        // decoding, the policies a service declares (retries, error policies, credentials) and
        // mock environments. It re-exports the transport.
        .target(
            name: "AIFServices",
            dependencies: [
                "AIFTransport",
                "COpenSSL",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // On top: the load engine and the proxy, managers, caching and observation. It
        // re-exports the layers below: `import AIFNetworking` gives all three.
        .target(
            name: "AIFNetworking",
            dependencies: [
                "AIFServices",
                "AIFTransport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "AIFNetworkingDiskCache",
            dependencies: [
                "AIFNetworking",
                .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["DiskCache"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "AIFNetworkingLifecycle",
            dependencies: [
                "AIFNetworking",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Lifecycle"])),
            ]
        ),
        .target(
            name: "AIFNetworkingMetrics",
            dependencies: [
                "AIFNetworking",
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
            ]
        ),
        .target(
            name: "AIFNetworkingTracing",
            dependencies: [
                "AIFNetworking",
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
            ]
        ),
        .target(
            name: "AIFNetworkingYAML",
            dependencies: [
                "AIFNetworking",
                .product(name: "Yams", package: "Yams", condition: .when(traits: ["YAML"])),
            ]
        ),
        // Typed interfaces: `@API` protocols, their generated clients and mocks. The macros'
        // implementation is a compiler plug-in of its own; neither is built without the trait.
        .target(
            name: "AIFNetworkingInterfaces",
            dependencies: [
                "AIFNetworking",
                .target(name: "AIFNetworkingMacros", condition: .when(traits: ["Interfaces"])),
            ]
        ),
        // Transports for clients swift-openapi-generator writes: on libcurl, and through a
        // registered service. Nothing of it is built without the trait.
        .target(
            name: "AIFNetworkingOpenAPI",
            dependencies: [
                "AIFNetworking",
                "AIFTransport",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["OpenAPI"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["OpenAPI"])),
            ]
        ),
        // The macros' expansion, a library of its own so that their tests reach it without
        // depending on the macro target: SwiftPM builds a test product whose targets depend on a
        // macro for the host, and with it every module the tests use a second time (the
        // samples and tools are built for the target), which doubled each clean build.
        .target(
            name: "AIFNetworkingInterfaceMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax", condition: .when(traits: ["Interfaces"])),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax", condition: .when(traits: ["Interfaces"])),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax", condition: .when(traits: ["Interfaces"])),
                .product(name: "SwiftBasicFormat", package: "swift-syntax", condition: .when(traits: ["Interfaces"])),
                .product(name: "SwiftDiagnostics", package: "swift-syntax", condition: .when(traits: ["Interfaces"])),
            ]
        ),
        // The compiler plug-in: the macros by the names `#externalMacro` gives them.
        .macro(
            name: "AIFNetworkingMacros",
            dependencies: [
                "AIFNetworkingInterfaceMacros",
                .product(name: "SwiftSyntax", package: "swift-syntax", condition: .when(traits: ["Interfaces"])),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax", condition: .when(traits: ["Interfaces"])),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax", condition: .when(traits: ["Interfaces"])),
            ]
        ),
        // The test kit: a stub transport, local servers, a signature verifier. It sits on the
        // services and the transport, so that their tests do not link the engine above.
        .target(
            name: "AIFNetworkingTesting",
            dependencies: [
                "AIFServices",
                "AIFTransport",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["TestServer"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["TestServer"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["TestServer"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["TestServer"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["TestServer"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The command-line tool: `aif` runs AIFCommandLine, which is built only with the
        // `CommandLineTool` trait (without it, `aif` says which trait it needs).
        .executableTarget(
            name: "aif",
            dependencies: [
                .target(name: "AIFCommandLine", condition: .when(traits: ["CommandLineTool"])),
            ]
        ),
        .target(
            name: "AIFCommandLine",
            dependencies: [
                "AIFNetworking",
                "AIFNetworkingYAML",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["CommandLineTool"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "DemoServer",
            dependencies: [
                "AIFNetworking",
                "AIFNetworkingTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Samples/DemoServer"
        ),
        // The sample that calls the demo shop through the OpenAPI transports, with the client
        // swift-openapi-generator wrote from the shop's document (Generated/, from
        // Samples/OpenAPISample/openapi.yaml; `make openapi-client` writes it again).
        .executableTarget(
            name: "OpenAPISample",
            dependencies: [
                "AIFNetworking",
                "AIFNetworkingOpenAPI",
                "AIFNetworkingTesting",
                "DemoServer",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            path: "Samples/OpenAPISample/OpenAPISample"
        ),
        .executableTarget(
            name: "TransportSample",
            dependencies: [
                "AIFNetworking",
                "AIFNetworkingTesting",
                "DemoServer",
            ],
            path: "Samples/TransportSample"
        ),
        .executableTarget(
            name: "DemoShop",
            dependencies: [
                "AIFNetworking",
                "AIFNetworkingTesting",
                "DemoServer",
            ],
            path: "Samples/DemoShop"
        ),
        .executableTarget(
            name: "ServerSample",
            dependencies: [
                "AIFNetworking",
                "AIFNetworkingDiskCache",
                "AIFNetworkingLifecycle",
                "AIFNetworkingTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Samples/ServerSample"
        ),
        .executableTarget(
            name: "ShopSample",
            dependencies: [
                "AIFNetworking",
                "AIFNetworkingInterfaces",
                "AIFNetworkingYAML",
                "AIFNetworkingTesting",
                "DemoServer",
            ],
            path: "Samples/ShopSample"
        ),
        .executableTarget(
            name: "HubSample",
            dependencies: [
                "AIFNetworking",
                "AIFNetworkingTesting",
                "DemoServer",
            ],
            path: "Samples/HubSample"
        ),
        // The Swift blocks of README.md and of the DocC articles, extracted by
        // scripts/extract-readme-snippets.sh (which `make test` runs) and compiled with the rest.
        .target(
            name: "ReadmeSnippets",
            dependencies: [
                "ReadmePrelude", "AIFNetworking", "AIFServices", "AIFTransport", "AIFNetworkingDiskCache", "AIFNetworkingTesting", "AIFNetworkingMetrics",
                "AIFNetworkingTracing", "AIFNetworkingInterfaces", "AIFNetworkingOpenAPI", "AIFNetworkingYAML", "AIFNetworkingLifecycle",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            path: "Tests/ReadmeSnippets"
        ),
        // What those blocks take as given (the Goods model, show(_:) …), in a module of its own so
        // that a document can declare the same names.
        .target(name: "ReadmePrelude", dependencies: ["AIFNetworking"], path: "Tests/ReadmePrelude"),
        // `make soak`: 100,000 loads through the manager stack against the demo shop and a fault
        // server, every one ended exactly once, memory flat, descriptors returned.
        .executableTarget(
            name: "aif-soak",
            dependencies: [
                "AIFNetworking",
                "ProcessResources",
                "AIFNetworkingTesting",
                "DemoServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/Soak"
        ),
        // `make fuzz`: the parsers under libFuzzer; built plainly, it replays the seed corpus
        // (Tests/Fuzz/Corpus), which the tests do.
        .executableTarget(
            name: "aif-fuzz",
            // The YAML define reader is fuzzed with the YAML trait on (`make fuzz` turns it on).
            dependencies: ["AIFNetworking", "AIFServices", "AIFTransport", "AIFNetworkingYAML", "FuzzSupport"],
            path: "Tests/Fuzz",
            exclude: ["Corpus", "lsan-suppressions.txt"]
        ),
        .target(name: "FuzzSupport", path: "Tests/FuzzSupport"),
        // A program the tests start in processes of their own.
        .executableTarget(
            name: "aif-test-helper",
            dependencies: ["AIFNetworking", "AIFNetworkingDiskCache", "ProcessResources"],
            path: "Tests/ProcessHelper"
        ),
        // Descriptors and memory of the process, for the helper, the soak and the tests.
        .target(name: "ProcessResources", path: "Tests/ProcessResources"),
        // Servers, certificates and waits the test targets share.
        .target(
            name: "TestSupport",
            dependencies: [
                "AIFTransport",
                "AIFNetworkingTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Tests/TestSupport"
        ),
        // The transport's tests: they see the transport, and the test kit (its stub transport,
        // local servers and signature verifier, built on the services), nothing of the engine or
        // managers above.
        .testTarget(
            name: "AIFTransportTests",
            dependencies: [
                "AIFTransport",
                "TestSupport",
                "AIFNetworkingTesting",
                "ProcessResources",
                "CCurl",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // Services, signing and decoding: they see those, the transport and the test kit, nothing above.
        .testTarget(
            name: "AIFServicesTests",
            dependencies: [
                "AIFServices",
                "AIFTransport",
                "TestSupport",
                "AIFNetworkingTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The engine, the proxy, managers, caching and observation, and the whole stack end to end.
        .testTarget(
            name: "AIFNetworkingTests",
            dependencies: [
                "AIFNetworking",
                "AIFServices",
                "AIFTransport",
                "TestSupport",
                "AIFNetworkingDiskCache",
                "AIFNetworkingTesting",
                "AIFNetworkingMetrics",
                "AIFNetworkingTracing",
                "AIFNetworkingYAML",
                "AIFNetworkingInterfaces",
                "AIFNetworkingOpenAPI",
                "AIFNetworkingLifecycle",
                "ProcessResources",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "GRDB", package: "GRDB.swift"),
                "CCurl",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                "DemoServer",
            ]
        ),
        // The macros' expansions and diagnostics, checked against the expected source.
        .testTarget(
            name: "AIFNetworkingMacrosTests",
            dependencies: [
                "AIFNetworkingInterfaceMacros",
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + sharedSwiftSettings
}

// The core modules import internally unless a file says `public import`: what a module shows of
// the modules below it is what its public declarations need, written where they need it.
for target in package.targets where ["AIFTransport", "AIFServices", "AIFNetworking"].contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("InternalImportsByDefault")]
}
