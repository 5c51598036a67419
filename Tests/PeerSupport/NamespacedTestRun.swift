import Foundation
import Testing

/// Runs some of this test binary's own tests in another process inside a network namespace,
/// for tests whose traffic must not touch this machine's real interfaces (mDNS, multicast) and
/// whose code under test opens its sockets in whatever namespace its process is in.
///
/// The parent test makes the namespace, then calls `run`, which starts this binary again
/// (`/proc/self/exe`) under `ip netns exec NAME unshare -u` with a host name of its own (every
/// namespace shares the machine's host name otherwise; two "machines" of a test must not) and
/// `NW_TEST_ROLE=<role>` in its environment; the child runs only the tests enabled for that
/// role (`NamespacedTestRun.role`), and its exit status and output become the parent's verdict.
/// In an ordinary run those child tests are disabled, with the reason shown.
public enum NamespacedTestRun {
    public static let roleVariable = "NW_TEST_ROLE"

    /// The role this process was started for, nil in an ordinary test run.
    public static var role: String? { ProcessInfo.processInfo.environment[roleVariable] }

    /// The environment entries given to the child (`NW_TEST_<KEY>`), read back there.
    public static func value(_ key: String) -> String? { ProcessInfo.processInfo.environment["NW_TEST_\(key)"] }

    public struct Outcome: Sendable, CustomStringConvertible {
        public let status: Int32
        public let output: String
        public var description: String { "exit status \(status); output:\n\(output)" }
        /// Whether the child ran at least one test and every test it ran passed.
        public var passed: Bool {
            status == 0 && testsPassed > 0
        }

        /// The count of "Test run with N tests in M suites passed" (0 without such a line).
        var testsPassed: Int {
            let summary = output.split(separator: "\n").last { $0.contains("Test run with ") && $0.contains(" passed") }
            guard let summary, let range = summary.range(of: "Test run with ") else { return 0 }
            return Int(summary[range.upperBound...].prefix { $0.isNumber }) ?? 0
        }
    }

    /// Runs the tests matching `filter` as `role` inside `namespace`, under the host name
    /// `hostname`, with `values` as `NW_TEST_<KEY>` variables; returns when the child exits.
    public static func run(
        filter: String, role: String, in namespace: TestNamespace, hostname: String, values: [String: String] = [:]
    ) async throws -> Outcome {
        guard let unshare = PeerProcess.executable("unshare", package: "util-linux"),
            let binary = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        else {
            return Outcome(status: -1, output: "unshare or /proc/self/exe missing")
        }
        let environment = ["\(roleVariable)=\(role)"] + values.sorted { $0.key < $1.key }.map { "NW_TEST_\($0.key)=\($0.value)" }
        let arguments = ["netns", "exec", namespace.name, unshare, "-u", "/bin/sh", "-c",
                         "hostname \"$0\" && exec /usr/bin/env \"$@\"", hostname]
            + environment + [binary, "--testing-library", "swift-testing", "--filter", filter]
        let result = try await offload { try ShortTool.run(namespace.ip, arguments) }
        return Outcome(status: result.status, output: result.output)
    }
}
