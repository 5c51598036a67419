import Foundation
import NetworkFuzzing

/// One executable for every fuzz target (`fuzz-network`): libFuzzer gets one entry point per
/// binary, and the environment variable `NETWORK_FUZZ_TARGET` (a `FuzzTarget` name such as
/// `dns-message`) says which body it runs. One binary links once, instead of six times.
enum FuzzEntry {
    /// The target this process fuzzes; it stops at once when the variable is missing or wrong.
    static let target: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["NETWORK_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            fatalError("set NETWORK_FUZZ_TARGET to one of: \(names) (got \(name.debugDescription))")
        }
        return target
    }()
}

/// libFuzzer's entry point: one input for the selected target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzEntry.target.run(data, size)
    return 0
}
