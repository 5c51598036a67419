import Foundation

/// How many times longer a time-bound test may allow under a sanitizer (docs/sanitizers.md).
///
/// `scripts/sanitizers.sh` sets `NETWORK_TEST_SANITIZER` (`thread` or `address`): sanitized code
/// runs several times slower, and every suite still runs at once on two cores. Tests multiply
/// their upper time bounds by `factor` and keep every assertion; lower bounds stay as they are.
public enum SanitizerSlowdown {
    /// 1 in a normal run, 5 under ThreadSanitizer, 3 under AddressSanitizer.
    public static let factor: Int = {
        switch ProcessInfo.processInfo.environment["NETWORK_TEST_SANITIZER"] {
        case "thread": 5
        case "address": 3
        default: 1
        }
    }()

    /// `seconds`, widened by `factor`.
    public static func seconds(_ seconds: Double) -> Double {
        seconds * Double(factor)
    }

    /// `duration`, widened by `factor`.
    public static func duration(_ duration: Duration) -> Duration {
        duration * factor
    }

    /// A bound on the process's resident memory, widened for a sanitizer's own memory: 4 times
    /// under AddressSanitizer (shadow memory, red zones, the quarantine of freed blocks), twice
    /// under ThreadSanitizer (its shadow memory).
    public static func residentBytes(_ bytes: Int) -> Int {
        switch factor {
        case 1: bytes
        case 3: bytes * 4
        default: bytes * 2
        }
    }
}
