import Dispatch
import Foundation
import Network
import PeerSupport
import Testing

/// The game framer over TLS with a pre-shared key, as Apple's peer-to-peer sample sets up its
/// connections: TLS_PSK_WITH_AES_128_GCM_SHA256, TCP keepalives, and each side naming a PSK
/// identity the other does not know (the sample's identity bytes differ per parameters object).
@Suite("Framer.PreSharedKey", .serialized)
struct FramerPreSharedKeyTests {
    static func parameters(key: Data, identity: String) -> NWParameters {
        let parameters = TLSInteropTests.pskParameters(key: Array(key), identity: identity)
        let tcp = parameters.defaultProtocolStack.transportProtocol as? NWProtocolTCP.Options
        tcp?.enableKeepalive = true
        tcp?.keepaliveIdle = 2
        parameters.includePeerToPeer = true
        return GameFramer.parameters(parameters)
    }

    @Test("same key, identities that differ: ready, and framed messages flow both ways")
    func identitiesThatDiffer() async throws {
        let key = Data((0..<32).map { UInt8($0) })
        let server = Self.parameters(key: key, identity: "listener's own")
        server.requiredLocalEndpoint = .hostPort(host: "127.0.0.1", port: .any)
        let queue = DispatchQueue(label: "framer-psk")
        let (listener, port) = try await FramerTests.echoListener(server, queue: queue)
        defer { listener.cancel() }
        let connection = NWConnection(
            host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.parameters(key: key, identity: "\0\0client"))
        let state = await TLSInteropTests.settle(connection)
        #expect(state == .ready, "\(String(describing: state))")
        defer { connection.cancel() }
        connection.send(content: Data("move 4".utf8), contentContext: GameFramer.context(type: 2), completion: .contentProcessed { _ in })
        let reply = try await FramerTests.receiveMessage(connection)
        #expect(reply.type == 102 && reply.payload == Data("move 4".utf8))
    }

    @Test("a different key never gets the connection ready")
    func differentKey() async throws {
        let server = Self.parameters(key: Data(repeating: 1, count: 32), identity: "p2p")
        server.requiredLocalEndpoint = .hostPort(host: "127.0.0.1", port: .any)
        let queue = DispatchQueue(label: "framer-psk-wrong")
        let (listener, port) = try await FramerTests.echoListener(server, queue: queue)
        defer { listener.cancel() }
        let connection = NWConnection(
            host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.parameters(key: Data(repeating: 2, count: 32), identity: "p2p"))
        let state = await TLSInteropTests.settle(connection)
        connection.cancel()
        guard case .failed = state else {
            Issue.record("expected failed, got \(String(describing: state))")
            return
        }
    }
}
