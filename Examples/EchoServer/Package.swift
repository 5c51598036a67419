// swift-tools-version:6.1
// An NWListener echo server written exactly as on macOS; it depends on this repository the way a
// user's package depends on it by URL. Build and run: `swift run --package-path Examples/EchoServer`.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the Network package is called whatever the
// checkout's folder is called (a user depending by URL writes "swift-network-linux" or similar).
let networkPackage = URL(fileURLWithPath: Context.packageDirectory)
    .deletingLastPathComponent().deletingLastPathComponent().standardizedFileURL.lastPathComponent

let package = Package(
    name: "EchoServer",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "EchoServer",
            dependencies: [.product(name: "Network", package: networkPackage)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
