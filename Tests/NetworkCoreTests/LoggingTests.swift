#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
@testable import NetworkCore
import NetworkDNS
import Testing

/// The pieces of the engine's logging that need no network: the environment switch, the
/// file handler's line format, and the redactions.
@Suite("Core.Logging")
struct LoggingTests {
    @Test("NETWORK_LOG: a level name, anything else means debug; unset, empty, 0 and off mean the application decides")
    func environmentSwitch() {
        #expect(NetworkLogSettings.parse(level: nil, file: nil) == nil)
        for off in ["", "0", "off", "OFF", "none"] {
            #expect(NetworkLogSettings.parse(level: off, file: nil) == nil, "\(off)")
        }
        #expect(NetworkLogSettings.parse(level: "trace", file: nil)?.level == .trace)
        #expect(NetworkLogSettings.parse(level: "Debug", file: nil)?.level == .debug)
        #expect(NetworkLogSettings.parse(level: "1", file: nil)?.level == .debug)
        #expect(NetworkLogSettings.parse(level: "info", file: nil)?.level == .info)
        // A file that cannot be opened falls back to standard error rather than losing the lines.
        let fallback = NetworkLogSettings.parse(level: "debug", file: "/nonexistent-directory/x.log")
        #expect(fallback?.sink === NetworkLogSink.standardError)
    }

    @Test("NETWORK_LOG_FILE lines: time, level, label and pid, sorted metadata, message; the file is private")
    func fileLines() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nwlog-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let settings = try #require(NetworkLogSettings.parse(level: "debug", file: path))
        let logger = Logger(label: "network.test") { NetworkLogHandler(label: $0, level: settings.level, sink: settings.sink) }
        logger.trace("below the level")
        logger.debug("first", metadata: ["connection": "C9", "b": "2"])
        logger.debug("second")
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        let pattern = #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z debug network\.test\[\#(getpid())\]: b=2 connection=C9 first$"#
        #expect(lines.first?.range(of: pattern, options: .regularExpression) != nil, "\(lines)")
        #expect(lines.last?.hasSuffix("]: second") == true)
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o600)
    }

    @Test("errors in log lines carry their domain, code and name")
    func errorText() {
        #expect(FlowError.posix(ECONNREFUSED).logDescription == "posix \(ECONNREFUSED) (\(String(cString: strerror(ECONNREFUSED))))")
        #expect(FlowError.tls(TLSStatus.certificateExpired).logDescription == "tls -9814 (certificate expired)")
        #expect(FlowError.dns(DNSServiceCode.noSuchRecord).logDescription == "dns -65554 (no such record)")
    }
}
