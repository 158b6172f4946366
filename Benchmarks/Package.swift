// swift-tools-version:6.1
import PackageDescription

// A package of its own, so that users of AIFNetworking never build AsyncHTTPClient.
let package = Package(
    name: "AIFNetworkingBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "AIFNetworking", path: "..", traits: ["DiskCache", "Metrics", "Tracing", "YAML", "Interfaces", "OpenAPI"]),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // One generated OpenAPI client (Sources/TransportBench/OpenAPI) on the three transports.
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
        // The server sample's twin: the same Hummingbird app, calling its backend with AsyncHTTPClient.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "CurlLoop",
            linkerSettings: [.linkedLibrary("curl")]
        ),
        .target(
            name: "BenchSupport",
            dependencies: [.product(name: "AIFNetworking", package: "AIFNetworking")]
        ),
        .executableTarget(
            name: "TransportBench",
            dependencies: [
                "CurlLoop",
                "BenchSupport",
                .product(name: "AIFNetworking", package: "AIFNetworking"),
                .product(name: "AIFTransport", package: "AIFNetworking"),
                .product(name: "AIFNetworkingDiskCache", package: "AIFNetworking"),
                .product(name: "AIFNetworkingMetrics", package: "AIFNetworking"),
                .product(name: "AIFNetworkingTracing", package: "AIFNetworking"),
                .product(name: "AIFNetworkingYAML", package: "AIFNetworking"),
                .product(name: "AIFNetworkingInterfaces", package: "AIFNetworking"),
                .product(name: "AIFNetworkingOpenAPI", package: "AIFNetworking"),
                .product(name: "AIFNetworkingTesting", package: "AIFNetworking"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        ),
        .executableTarget(
            name: "TransportProfile",
            dependencies: [
                "CurlLoop",
                "BenchSupport",
                .product(name: "AIFNetworking", package: "AIFNetworking"),
                .product(name: "AIFNetworkingInterfaces", package: "AIFNetworking"),
                .product(name: "AIFTransport", package: "AIFNetworking"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
