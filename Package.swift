// swift-tools-version:6.1
import PackageDescription

// The libFuzzer executable (Fuzz/README.md) exists only when NETWORK_FUZZ is set, so a normal
// build never compiles it; the fuzz bodies (NetworkFuzzing) and the corpus replay test always build.
// NETWORK_FUZZ=replay builds it without libFuzzer, to replay files (a crash's input) in a debugger.
let fuzzMode = Context.environment["NETWORK_FUZZ"] ?? ""
let fuzzing = !fuzzMode.isEmpty && fuzzMode != "0"
let libFuzzer = fuzzing && fuzzMode != "replay"

// Layering (see ARCHITECTURE.md): Network (public API) -> NetworkCore (engine) -> NetworkSystem (Linux),
// with the leaf modules NetworkDNS and NetworkPAC (PAC scripts, resolving through NetworkDNS) beside it.
// The facade imports neither NIO nor NetworkSystem: the engine offers what it needs.
let package = Package(
    name: "swift-network-linux",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Network", targets: ["Network"]),
        .library(name: "Security", targets: ["Security"]),
        .executable(name: "nwcat", targets: ["nwcat"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // Only for `swift package generate-documentation` (scripts/docs.sh); nothing links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The project's lock: a `Mutex` that ThreadSanitizer understands (see docs/sanitizers.md).
        // A leaf every target imports; its C module only declares the sanitizer's annotations.
        .systemLibrary(name: "CThreadSanitizer", path: "Sources/CThreadSanitizer"),
        .target(name: "NetworkSync", dependencies: ["CThreadSanitizer"]),
        .target(
            name: "NetworkSystem",
            dependencies: []
        ),
        // System libraries (pkg-config; installed by scripts/install-deps.sh).
        .systemLibrary(
            name: "CGnuTLS", path: "Sources/CGnuTLS", pkgConfig: "gnutls",
            providers: [.apt(["libgnutls28-dev"])]
        ),
        .systemLibrary(
            name: "CDuktape", path: "Sources/CDuktape", pkgConfig: "duktape",
            providers: [.apt(["duktape-dev"])]
        ),
        .systemLibrary(
            name: "CNGTCP2", path: "Sources/CNGTCP2", pkgConfig: "libngtcp2_crypto_gnutls",
            providers: [.apt(["libngtcp2-dev", "libngtcp2-crypto-gnutls-dev"])]
        ),
        .target(
            name: "NetworkDNS",
            dependencies: [
                "NetworkSync",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NetworkPAC",
            dependencies: [
                "NetworkSync",
                "NetworkDNS",
                "CDuktape",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NetworkCore",
            dependencies: [
                "NetworkSync",
                "NetworkSystem",
                "NetworkDNS",
                "NetworkPAC",
                "CGnuTLS",
                "CNGTCP2",
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // WebSocket frames and the upgrade's accept value.
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                .product(name: "NIOCore", package: "swift-nio"),
                // Data <-> ByteBuffer for the facade's sends and receives.
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .target(
            // Apple's TLS knobs (sec_protocol_*), under the module name Apple code imports.
            name: "Security",
            dependencies: ["NetworkSync", "NetworkSystem"]
        ),
        .target(
            name: "Network",
            dependencies: [
                "NetworkSync",
                "Security",
                // The engine only: NIO and the system layer stay behind it.
                "NetworkCore",
            ]
        ),
        .executableTarget(
            name: "nwcat",
            dependencies: [
                "Network",
                "NetworkSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                "CGnuTLS",
            ]
        ),
        // One fuzz body per parser of network input: what each fuzz executable runs, and what
        // NetworkFuzzingTests replays the seed corpora (Fuzz/Corpus) through.
        .target(
            name: "NetworkFuzzing",
            dependencies: [
                "NetworkDNS",
                "NetworkPAC",
                "NetworkCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            path: "Fuzz/Bodies"
        ),
        .testTarget(name: "NetworkFuzzingTests", dependencies: ["NetworkFuzzing"]),
        // Shared by the test targets: real peer processes, /proc readers, waiting helpers.
        .target(name: "PeerSupport", dependencies: ["NetworkSync"], path: "Tests/PeerSupport"),
        .testTarget(name: "NetworkSyncTests", dependencies: ["NetworkSync"]),
        .testTarget(name: "NetworkSystemTests", dependencies: ["NetworkSystem"]),
        .testTarget(
            name: "NetworkDNSTests",
            dependencies: [
                "NetworkSync",
                "NetworkDNS",
                "PeerSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "NetworkPACTests",
            dependencies: [
                "NetworkPAC",
                "NetworkDNS",
                "CDuktape",
                "PeerSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "NetworkCoreTests",
            dependencies: [
                "NetworkSync",
                "NetworkCore",
                "PeerSupport",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "NetworkTests",
            dependencies: [
                "NetworkSync",
                "Network",
                "NetworkSystem",
                "PeerSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

if libFuzzer {
    // libFuzzer's coverage instrumentation goes into the modules that hold the parsers, not into
    // the dependencies: Fuzz/fuzz.sh then builds in any scratch path, AddressSanitizer's test
    // build included, recompiling only these (CI fuzzes in the one its tests just used).
    let instrumented: Set<String> = ["NetworkSystem", "NetworkDNS", "NetworkPAC", "NetworkCore", "NetworkFuzzing"]
    for target in package.targets where instrumented.contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=fuzzer"])]
    }
    package.targets.append(
        .executableTarget(
            name: "fuzz-network",
            dependencies: ["NetworkFuzzing"],
            path: "Fuzz/Target",
            swiftSettings: [.unsafeFlags(["-sanitize=fuzzer", "-parse-as-library"]), .define("NETWORK_LIBFUZZER")],
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer"])]
        )
    )
} else if fuzzing {
    package.targets.append(.executableTarget(name: "fuzz-network", dependencies: ["NetworkFuzzing"], path: "Fuzz/Target"))
}
