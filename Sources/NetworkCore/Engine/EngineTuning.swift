#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Switches for measuring the engine's hot-path shortcuts against the plain path in one build
/// (Benchmarks/, PROFILE.md). Read once from the environment; both default to on.
package enum EngineTuning {
    /// `NETWORK_DIRECT_IO=0` turns off writes from the sender's thread (`DirectSocket`) and
    /// receives that wait for an armed read (`FlowInbox.readArmed`): every operation then hops
    /// to the event loop, as before they existed.
    package static let directIO: Bool = {
        guard let value = getenv("NETWORK_DIRECT_IO") else { return true }
        return String(cString: value) != "0"
    }()
}
