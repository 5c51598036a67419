import Foundation
import Network
import PeerSupport
import Testing

/// Our side of `UDPBroadcastTests`, inside namespace A (10.82.0.1/24, default route on the
/// link); the receiver in B logs each datagram to `DIR/receiver.log` as "SOURCE PORT PAYLOAD".
@Suite(
    "Connection.UDPBroadcastInside", .serialized,
    .enabled(if: NamespacedTestRun.role == "broadcast", "runs inside a network namespace, started by Connection.UDPBroadcast"))
struct UDPBroadcastInsideTests {
    static func receiverLog() -> [String] {
        let path = URL(fileURLWithPath: NamespacedTestRun.value("DIR") ?? "/nonexistent").appendingPathComponent("receiver.log").path
        return ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test("to 255.255.255.255 and to 10.82.0.255: ready, the send completes, the receiver gets the datagram from 10.82.0.1", arguments: ["255.255.255.255", "10.82.0.255"])
    func broadcast(address: String) async throws {
        let port = NWEndpoint.Port(NamespacedTestRun.value("PORT") ?? "") ?? .any
        let parameters = NWParameters.udp
        parameters.allowLocalEndpointReuse = true
        let connection = NWConnection(host: NWEndpoint.Host(address), port: port, using: parameters)
        let states = Recorder<NWConnection.State>()
        connection.stateUpdateHandler = { states.append($0) }
        connection.start(queue: DispatchQueue(label: "broadcast"))
        defer { connection.cancel() }
        try await states.wait("ready", until: { $0.contains(.ready) })
        let payload = "broadcast to \(address)"
        // A datagram can be lost; a few tries, until the receiver logged one.
        for _ in 0..<20 where !Self.receiverLog().contains(where: { $0.hasSuffix(payload) }) {
            let sent = Recorder<NWError?>()
            connection.send(content: Data(payload.utf8), completion: .contentProcessed { sent.append($0) })
            #expect(try await sent.wait(count: 1, "the send's completion") == [nil])
            try await Task.sleep(for: .milliseconds(100))
        }
        let lines = Self.receiverLog().filter { $0.hasSuffix(payload) }
        #expect(!lines.isEmpty, "the receiver got nothing: \(Self.receiverLog().suffix(5))")
        #expect(lines.allSatisfy { $0.hasPrefix("10.82.0.1 ") }, "\(lines)")
    }

    @Test("a UDP listener on the wildcard address gets what B broadcasts (255.255.255.255 from 10.82.0.2, 10.82.0.255 from 10.82.0.3), each sender as a connection")
    func listenerReceivesBroadcasts() async throws {
        let port = NWEndpoint.Port(NamespacedTestRun.value("LISTENER_PORT") ?? "") ?? .any
        let received = Recorder<String>()
        let queue = DispatchQueue(label: "broadcast-listener")
        let probe = try ListenerProbe(parameters: .udp, port: port) { connection in
            connection.start(queue: queue)
            @Sendable func receive() {
                connection.receiveMessage { content, _, _, error in
                    guard error == nil, let content else { return }
                    received.append("\(connection.endpoint.debugDescription) \(String(decoding: content, as: UTF8.self))")
                    receive()
                }
            }
            receive()
        }
        try await probe.startAndWaitReady()
        let values = try await received.wait("datagrams from both senders") { values in
            values.contains { $0.hasPrefix("10.82.0.2:") } && values.contains { $0.hasPrefix("10.82.0.3:") }
        }
        for value in values {
            let sender = value.split(separator: ":").first.map(String.init) ?? ""
            #expect(value.contains(" from \(sender) "), "\(value)")
        }
        for connection in probe.connections.values { connection.cancel() }
        try await probe.cancelAndWait()
    }
}
