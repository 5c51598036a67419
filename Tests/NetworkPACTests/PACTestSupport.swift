import Foundation
@testable import NetworkPAC

/// Fixed host services for PAC tests: no DNS traffic, no dependence on this machine's
/// interfaces or on the clock.
enum PACTestEnvironment {
    static let names: [String: [String]] = [
        "www.example.test": ["192.0.2.10", "2001:db8::10"],
        "v6only.test": ["2001:db8::20"],
        "multi.test": ["2001:db8::1", "198.51.100.7", "198.51.100.8"],
    ]

    /// Wednesday 4 March 2026, 13:45:30 UTC.
    static let now = Date(timeIntervalSince1970: 1_772_631_930)

    static var environment: PACHostEnvironment {
        PACHostEnvironment(
            resolve: { names[$0] ?? [] },
            localAddresses: { ["10.1.2.3", "fd00::3"] },
            now: { now })
    }

    static func configuration(timeLimit: Double = 5, memoryLimit: Int = 16 << 20) -> PACConfiguration {
        var configuration = PACConfiguration()
        configuration.environment = environment
        configuration.timeLimit = timeLimit
        configuration.memoryLimit = memoryLimit
        return configuration
    }

    /// A script whose answer is the string value of the expression passed as the URL, so one
    /// heap checks many helper calls.
    static let expressionScript = "function FindProxyForURL(url, host) { return String(eval(url)); }"
}
