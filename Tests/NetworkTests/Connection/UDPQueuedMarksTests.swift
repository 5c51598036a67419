import Foundation
import Network
import PeerSupport
import Testing

/// Per-datagram markings (a send's ECN codepoint, the connection's service class, a send's own
/// class) survive a full socket: inside a namespace of its own, whose loopback has a token-bucket
/// queue of 8 Mbit/s (`tc ... tbf`), a batch of 600 datagrams fills the socket's send buffer
/// after about a hundred, so the rest wait to be written. Python's `socket` reads each one's TOS
/// byte (`multicast_peer.py --report-tos`); our side runs in a child process inside the
/// namespace (`UDPQueuedMarksInsideTests`, role "queued-marks").
@Suite("Connection.UDPQueuedMarks")
struct UDPQueuedMarksTests {
    /// Each kind of datagram the inside test sends, in turn, and the TOS byte it must arrive with.
    static let expectedTOS: [String: Int] = UDPQueuedMarksInsideTests.kinds.reduce(into: [:]) { $0[$1.name] = $1.tos }

    @Test("600 marked datagrams sent in one batch into a rate-limited link: every one arrives, each with its whole TOS byte (class DSCP beside its ECN codepoint, or its own class)")
    func marksSurviveAFullSocket() async throws {
        guard let python = PeerProcess.executable("python3", package: "python3"),
            let tc = PeerProcess.executable("tc", package: "iproute2"),
            let a = TestNamespace.make()
        else { return }
        defer { a.tearDown() }
        // Datagrams wait in the queue, charged to the sending socket, until the bucket lets them go.
        try a.run(tc, ["qdisc", "replace", "dev", "lo", "root", "tbf", "rate", "8mbit", "burst", "16kb", "latency", "5s"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("queued-marks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("receiver.log").path
        let port = "47084"
        let receiver = try a.start(python, [
            PythonPeer.scripts.appendingPathComponent("multicast_peer.py").path, "--log", log,
            "--bind", "127.0.0.1", "--port", port, "--report-tos", "--interval", "3600",
        ])
        defer { receiver.stop() }
        @Sendable func lines() -> [Substring] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        }
        try await withTimeout(seconds: 20, "the receiver ready") {
            while !lines().contains(where: { $0.hasPrefix("ready ") }) { try await Task.sleep(for: .milliseconds(50)) }
        }

        let outcome = try await NamespacedTestRun.run(
            filter: "UDPQueuedMarksInsideTests", role: "queued-marks", in: a, hostname: "nwqueued", values: ["PORT": port])
        #expect(outcome.passed, "\(outcome)")

        // "127.0.0.1 PORT KIND SEQ ... tos=N", one line per datagram.
        let count = UDPQueuedMarksInsideTests.count
        let received = try await withTimeout(seconds: 20, "\(count) datagrams at the receiver") {
            while true {
                let datagrams = lines().filter { !$0.hasPrefix("ready ") }
                if datagrams.count >= count { return datagrams }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        var wrong: [String] = []
        for line in received {
            let fields = line.split(separator: " ")
            guard fields.count >= 4, let kind = fields.dropFirst(2).first, let tos = fields.last?.split(separator: "=").last.flatMap({ Int($0) })
            else {
                wrong.append(String(line.prefix(60)))
                continue
            }
            if Self.expectedTOS[String(kind)] != tos { wrong.append("\(kind) \(fields[3]) tos=\(tos)") }
        }
        #expect(received.count == count)
        #expect(wrong.isEmpty, "\(wrong.count) datagrams with the wrong TOS byte, e.g. \(wrong.prefix(5))")
    }
}
