import Foundation
import Network
import PeerSupport
import Testing

/// Our side of `UDPQueuedMarksTests`, inside its namespace, whose loopback is rate-limited: one
/// batch of `count` datagrams to the receiver on 127.0.0.1, cycling through `kinds`.
@Suite(
    "Connection.UDPQueuedMarksInside", .serialized,
    .enabled(if: NamespacedTestRun.role == "queued-marks", "runs inside a network namespace, started by Connection.UDPQueuedMarks"))
struct UDPQueuedMarksInsideTests {
    /// A kind of datagram: its ECN codepoint, its own service class (nil: the connection's,
    /// interactive voice, DSCP 46; signaling is CS3, DSCP 24), and the TOS byte it must leave with.
    struct Kind: Sendable {
        let name: String
        let ecn: NWProtocolIP.ECN?
        let serviceClass: NWParameters.ServiceClass?
        let tos: Int
    }

    static let kinds: [Kind] = [
        Kind(name: "ce", ecn: .ce, serviceClass: nil, tos: 0xBB),
        Kind(name: "plain", ecn: nil, serviceClass: nil, tos: 0xB8),
        Kind(name: "signaling-ect1", ecn: .ect1, serviceClass: .signaling, tos: 0x61),
        Kind(name: "ect0", ecn: .ect0, serviceClass: nil, tos: 0xBA),
    ]
    static let count = 600

    @Test("one batch of 600 marked 1,000-byte datagrams: every send completes without an error")
    func sendMarkedBatch() async throws {
        let port = NWEndpoint.Port(NamespacedTestRun.value("PORT") ?? "") ?? .any
        let parameters = NWParameters.udp
        parameters.serviceClass = .interactiveVoice
        let connection = NWConnection(host: "127.0.0.1", port: port, using: parameters)
        let states = Recorder<NWConnection.State>()
        connection.stateUpdateHandler = { states.append($0) }
        connection.start(queue: DispatchQueue(label: "queued-marks"))
        defer { connection.cancel() }
        try await states.wait("ready", until: { $0.contains(.ready) })
        let done = Recorder<NWError?>()
        connection.batch {
            for index in 0..<Self.count {
                let kind = Self.kinds[index % Self.kinds.count]
                var metadata: [NWProtocolMetadata] = []
                if kind.ecn != nil || kind.serviceClass != nil {
                    let ip = NWProtocolIP.Metadata()
                    if let ecn = kind.ecn { ip.ecn = ecn }
                    if let serviceClass = kind.serviceClass { ip.serviceClass = serviceClass }
                    metadata.append(ip)
                }
                let context = NWConnection.ContentContext(identifier: kind.name, metadata: metadata)
                let text = "\(kind.name) \(index) "
                let payload = Data(text.utf8) + Data(repeating: UInt8(ascii: "."), count: 1_000 - text.utf8.count)
                connection.send(content: payload, contentContext: context, completion: .contentProcessed { done.append($0) })
            }
        }
        let results = try await done.wait(count: Self.count, "send completions", timeout: 30)
        #expect(results.allSatisfy { $0 == nil }, "\(results.compactMap { $0 }.prefix(3))")
    }
}
