// swift-tools-version:6.1
// Benchmarks for the Network package (separate package so the main package has no benchmark deps).
// See README.md for the method; run.sh runs everything and writes RESULTS.md.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after the folder it sits in, so the parent package's identity is
// whatever the checkout happens to be called (`main`, `swift-network-linux`, `ci-try` ...).
let networkPackage = URL(fileURLWithPath: Context.packageDirectory)
    .deletingLastPathComponent().standardizedFileURL.lastPathComponent

let package = Package(
    name: "NetworkBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Shared helpers: argument parsing, JSON result line, RSS, rlimit, clock.
        .target(name: "BenchSupport", dependencies: ["CBenchShims"]),
        .target(name: "CBenchShims"),
        // Scenario drivers written against plain SwiftNIO (NIOPosix bootstraps; NIOSSL for TLS).
        .target(
            name: "NIOClients",
            dependencies: [
                "BenchSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // Scenario drivers written against our Network module (Apple's classic API).
        .target(
            name: "NWClients",
            dependencies: [
                "BenchSupport",
                .product(name: "Network", package: networkPackage),
            ]
        ),
        // CLI executables: one invocation = one measurement = one JSON line on stdout.
        .executableTarget(name: "nio-bench", dependencies: ["BenchSupport", "NIOClients"]),
        .executableTarget(name: "nw-bench", dependencies: ["BenchSupport", "NWClients"]),
        // package-benchmark suite (`swift package benchmark`).
        .executableTarget(
            name: "NetworkBenchmarks",
            dependencies: [
                "BenchSupport",
                "NIOClients",
                "NWClients",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/NetworkBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
