import Foundation
import PeerSupport
import Testing

@testable import Network

/// The 2025 API's Bonjour story in one process, over a namespace's loopback with multicast on
/// (`BonjourTests` makes the namespace and starts this binary in it as role
/// `concurrency-bonjour`; disabled elsewhere: its multicast must not leave this machine's real
/// interfaces): a `NetworkListener` advertises a game with Coder over TLS, a `NetworkBrowser`
/// finds it and returns it from `run`, a `NetworkConnection` to the endpoint plays.
@Suite(
    "Concurrency.Bonjour",
    .enabled(if: NamespacedTestRun.role == "concurrency-bonjour", "runs inside a network namespace, started by Bonjour"))
struct ConcurrencyBonjourTests {
    static let type = "_nwgame._tcp"

    @Test("listener advertised by .bonjour(name:type:), found by NetworkBrowser.run returning .finish, connected to by its endpoint; registration updates; run ends on cancel")
    func gameOverBonjour() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let pinned = try identity.certificateDER
        let serverTLS = TLS().localIdentity(try identity.secIdentity)
        // A peer-to-peer game pins the server's certificate (no CA, no DNS name for it).
        let clientTLS = TLS().certificateValidator { _, trust in
            let secTrust = sec_trust_copy_ref(trust).takeRetainedValue()
            guard let chain = SecTrustCopyCertificateChain(secTrust) as? [SecCertificate], let leaf = chain.first else { return false }
            return SecCertificateCopyData(leaf) as Data == pinned
        }

        let registrations = Recorder<String>()
        let listener = try NetworkListener(for: .bonjour(name: "Koala Game", type: Self.type)) {
            Coder(WWDC2025SampleTests.GameMessage.self, using: .json) { serverTLS }
        }
        listener.onServiceRegistrationUpdate { _, change in
            switch change {
            case .add(let endpoint): registrations.append("add \(endpoint)")
            case .remove(let endpoint): registrations.append("remove \(endpoint)")
            }
        }
        let server = try await RunningListener(listener) { connection in
            for try await (message, _) in connection.messages {
                if case .move(let row, let column) = message {
                    try await connection.send(WWDC2025SampleTests.GameMessage.move(row: row + 1, column: column + 1))
                }
            }
        }
        #expect(listener.service?.type == Self.type)

        let browser = NetworkBrowser(for: .bonjour(Self.type))
        let browserStates = Recorder<NetworkBrowser<Bonjour>.State>()
        browser.onStateUpdate { _, state in browserStates.append(state) }
        let endpoint = try await withTimeout(seconds: 10, "the browser finding the game") {
            try await browser.run { endpoints -> NetworkBrowser<Bonjour>.RunResult<Bonjour.Endpoint> in
                guard let game = endpoints.first(where: { $0.name == "Koala Game" }) else { return .continue }
                return .finish(game)
            }
        }
        #expect(endpoint.type == Self.type)
        #expect(endpoint.domain == "local.")
        #expect(endpoint.nwEndpoint == .service(name: "Koala Game", type: Self.type, domain: "local.", interface: nil))
        #expect(endpoint.result.interfaces.map(\.name) == ["lo"])
        try await browserStates.wait("the browser cancelled after run") { $0.last == .cancelled }

        try await withNetworkConnection(to: endpoint.nwEndpoint, using: {
            Coder(WWDC2025SampleTests.GameMessage.self, using: .json) { clientTLS }
        }) { connection in
            try await connection.send(WWDC2025SampleTests.GameMessage.move(row: 1, column: 1))
            #expect(try await connection.receive().content == .move(row: 2, column: 2))
        }
        // The Connectable form of the same.
        let byEndpoint = NetworkConnection(to: endpoint) { Coder(WWDC2025SampleTests.GameMessage.self, using: .json) { clientTLS } }
        try await byEndpoint.send(WWDC2025SampleTests.GameMessage.move(row: 5, column: 6))
        #expect(try await byEndpoint.receive().content == .move(row: 6, column: 7))

        let added = try await registrations.wait(count: 1, "the registration")
        #expect(added.first?.hasPrefix("add ") == true, "\(added)")
        #expect(await server.stop() is CancellationError)
        print("bonjour (2025 API): found \(endpoint), registrations \(registrations.values)")
    }

    @Test("NetworkBrowser.run with a Void handler browses until its task is cancelled (CancellationError)")
    func browseUntilCancelled() async throws {
        let browser = NetworkBrowser(for: .bonjour("_nothing._tcp", includeTxtRecord: true))
        let task = Task { try await browser.run { _ in } }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
