import Foundation
import PeerSupport
import Testing

@testable import Network

/// The code samples of WWDC 2025's "Use structured concurrency with Network framework", written
/// again, end to end on loopback: a TLS connection, TLV game messages, Coder game messages, and
/// a listener reading `messages`. The server's certificate comes from a test CA, which the
/// clients trust through `certificateValidator` (the default, the system store, refuses it).
@Suite("Concurrency.WWDC2025", .serialized)
struct WWDC2025SampleTests {
    enum GameMessageType: Int {
        case selectedCharacter = 0
        case move = 1
    }

    struct GameCharacter: Codable, Equatable {
        let character: String
    }

    struct GameMove: Codable, Equatable {
        let row: Int
        let column: Int
    }

    enum GameMessage: Codable, Equatable, Sendable {
        case selectedCharacter(String)
        case move(row: Int, column: Int)
    }

    /// A CA, a `localhost` identity it signed, and client TLS that trusts the CA.
    struct Certificates: Sendable {
        let identity: sec_identity_t
        let anchor: SecCertificate

        static func make() throws -> Certificates {
            let authority = try TestCertificateAuthority.make()
            let leaf = try authority.issue()
            return Certificates(identity: try leaf.secIdentity, anchor: try authority.certificate)
        }

        /// TLS for a client: the server is verified against the test CA (and its host name).
        var clientTLS: TLS {
            let anchor = anchor
            return TLS().certificateValidator { _, trust in
                let secTrust = sec_trust_copy_ref(trust).takeRetainedValue()
                SecTrustSetAnchorCertificates(secTrust, [anchor] as CFArray)
                return SecTrustEvaluateWithError(secTrust, nil)
            }
        }

        var serverTLS: TLS { TLS().localIdentity(identity) }
    }

    @Test("TLS: send, then receive(exactly:) of the reply; plain TLS() (system trust store) refuses the test CA's server")
    func tls() async throws {
        let certificates = try Certificates.make()
        let server = try await RunningListener(try NetworkListener { certificates.serverTLS }) { connection in
            let request = try await connection.receive(exactly: 13).content
            try await connection.send(Data(String(decoding: request, as: UTF8.self).uppercased().utf8))
        }
        let endpoint = NWEndpoint.hostPort(host: "localhost", port: server.port)

        let connection = NetworkConnection(to: endpoint) { certificates.clientTLS }
        try await connection.send(Data("Hello, world!".utf8))
        let incoming = try await connection.receive(exactly: 13).content
        #expect(String(decoding: incoming, as: UTF8.self) == "HELLO, WORLD!")
        let tlsMetadata = connection.metadata(definition: NWProtocolTLS.definition) as? NWProtocolTLS.Metadata
        #expect(tlsMetadata != nil)

        let untrusting = NetworkConnection(to: endpoint) { TLS() }
        await #expect {
            try await untrusting.send(Data("secret".utf8))
        } throws: { error in
            guard case .tls = error as? NWError else { return false }
            return true
        }
        #expect(await server.stop() is CancellationError)
    }

    @Test("TLS over TCP over IP written out, with IP and TCP options and .parameters { }.constrainedPathsProhibited(true)")
    func explicitStack() async throws {
        let certificates = try Certificates.make()
        let server = try await RunningListener(try NetworkListener { certificates.serverTLS }) { connection in
            try await connection.send(try await connection.receive(exactly: 4).content)
        }
        let endpoint = NWEndpoint.hostPort(host: "localhost", port: server.port)
        let written = NetworkConnection(to: endpoint) {
            certificates.clientTLS.applicationProtocols([]) // (the validator's TLS, as written)
        }
        try await written.send(Data("ping".utf8))
        #expect(try await written.receive(exactly: 4).content == Data("ping".utf8))

        let anchor = certificates.anchor
        let parameters = NetworkConnection(
            to: endpoint,
            using: .parameters {
                TLS {
                    TCP { IP().fragmentationDisabled(true) }.noDelay(true)
                }.certificateValidator { _, trust in
                    let secTrust = sec_trust_copy_ref(trust).takeRetainedValue()
                    SecTrustSetAnchorCertificates(secTrust, [anchor] as CFArray)
                    return SecTrustEvaluateWithError(secTrust, nil)
                }
            }.constrainedPathsProhibited(true))
        #expect(parameters.parameters.prohibitConstrainedPaths)
        try await parameters.send(Data("pong".utf8))
        #expect(try await parameters.receive(exactly: 4).content == Data("pong".utf8))
        _ = await server.stop()
    }

    @Test("TLV over TLS: a character and a move go out with their types, come back with them (metadata.type)")
    func tlv() async throws {
        let certificates = try Certificates.make()
        let server = try await RunningListener(try NetworkListener { TLV { certificates.serverTLS } }) { connection in
            for try await (content, metadata) in connection.messages {
                try await connection.send(content, type: metadata.type)
            }
        }
        let connection = NetworkConnection(to: .hostPort(host: "localhost", port: server.port)) {
            TLV { certificates.clientTLS }
        }
        let characterData = try JSONEncoder().encode(GameCharacter(character: "🐨"))
        try await connection.send(characterData, type: GameMessageType.selectedCharacter.rawValue)
        try await connection.send(try JSONEncoder().encode(GameMove(row: 1, column: 2)), type: GameMessageType.move.rawValue)
        try await connection.send(Data(), type: 7)

        var seen: [String] = []
        for _ in 0..<3 {
            let (incomingData, metadata) = try await connection.receive()
            switch GameMessageType(rawValue: metadata.type) {
            case .selectedCharacter:
                seen.append("character \(try JSONDecoder().decode(GameCharacter.self, from: incomingData).character)")
            case .move:
                let move = try JSONDecoder().decode(GameMove.self, from: incomingData)
                seen.append("move \(move.row),\(move.column)")
            case .none:
                seen.append("unknown type \(metadata.type), \(incomingData.count) bytes")
            }
        }
        #expect(seen == ["character 🐨", "move 1,2", "unknown type 7, 0 bytes"])
        await #expect(throws: NWError.posix(.EINVAL)) { try await connection.send(Data([1]), type: -1) }
        _ = await server.stop()
    }

    @Test("Coder over TLS: enum values both ways; the listener reads messages and answers each")
    func coder() async throws {
        let certificates = try Certificates.make()
        let listener = try NetworkListener { Coder(GameMessage.self, using: .json) { certificates.serverTLS } }
        let server = try await RunningListener(listener) { connection in
            for try await (gameMessage, _) in connection.messages {
                switch gameMessage {
                case .selectedCharacter(let character):
                    try await connection.send(GameMessage.selectedCharacter(character + "!"))
                case .move(let row, let column):
                    try await connection.send(GameMessage.move(row: column, column: row))
                }
            }
        }
        let connection = NetworkConnection(to: .hostPort(host: "localhost", port: server.port)) {
            Coder(GameMessage.self, using: .json) { certificates.clientTLS }
        }
        let selectedCharacter: GameMessage = .selectedCharacter("🐨")
        try await connection.send(selectedCharacter)
        try await connection.send(GameMessage.move(row: 3, column: 4))
        #expect(try await connection.receive().content == .selectedCharacter("🐨!"))
        let gameMessage = try await connection.receive().content
        switch gameMessage {
        case .selectedCharacter(let character): Issue.record("unexpected character \(character)")
        case .move(let row, let column): #expect((row, column) == (4, 3))
        }
        _ = await server.stop()
    }
}
