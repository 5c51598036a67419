import ArgumentParser
import Dispatch
import Foundation
import Network

/// `nwcat demo`: the WWDC 2025 story of the structured-concurrency API in one process.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The WWDC 2025 story: a Bonjour game over Coder and TLS, found by a browser and played.",
        discussion: """
            A NetworkListener advertises a game as a Bonjour service (_nwcat-demo._tcp) with a \
            Coder stack over TLS (a self-signed certificate made at start); a NetworkBrowser finds \
            it; a NetworkConnection to what it found, pinning that certificate, exchanges a few \
            game messages. Every step is printed. Exits 0 when the game was played, 1 with the \
            reason otherwise (after --timeout seconds at the latest).

            The service is advertised by multicast DNS on this machine's interfaces, as Bonjour \
            does; scripts/demo.sh runs it inside a network namespace when CI runs it.
            """
    )

    @Option(help: "Give up after this many seconds.")
    var timeout: Double = 20

    /// The game's messages, as the session's sample declares them.
    enum GameMessage: Codable, Sendable, CustomStringConvertible {
        case selectedCharacter(String)
        case move(row: Int, column: Int)

        var description: String {
            switch self {
            case .selectedCharacter(let character): "selectedCharacter(\(character))"
            case .move(let row, let column): "move(row: \(row), column: \(column))"
            }
        }
    }

    func validate() throws {
        if timeout <= 0 { throw ValidationError("--timeout must be positive") }
    }

    func run() throws {
        let latch = ExitLatch()
        let timeout = self.timeout
        let game = Task {
            do {
                try await Self.play()
                latch.finish(0)
            } catch {
                Self.say("demo", "FAILED: \(error)")
                latch.finish(1)
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
            Self.say("demo", "FAILED: not done after \(timeout) s")
            latch.finish(1)
        }
        let code = latch.wait()
        game.cancel()
        if code != 0 { throw ExitCode(code) }
    }

    private static let started = ContinuousClock.now

    /// One transcript line: the time since start, who speaks, what happened.
    static func say(_ who: String, _ what: String) {
        let elapsed = (ContinuousClock.now - started).components
        let milliseconds = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
        let time = String(milliseconds)
        let line = String(repeating: " ", count: max(0, 6 - time.count)) + time + " ms  "
            + who + String(repeating: " ", count: max(1, 9 - who.count)) + what + "\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }

    static func play() async throws {
        let type = "_nwcat-demo._tcp"
        let name = "nwcat demo \(getpid())"
        let identity = try SelfSignedIdentity.generate(hostName: "localhost")
        say("listener", "self-signed certificate made, SHA-256 \(identity.pin.prefix(16))…")

        let listener = try NetworkListener(for: .bonjour(name: name, type: type)) {
            Coder(GameMessage.self, using: .json) { TLS().localIdentity(identity.identity) }
        }
        listener.onStateUpdate { listener, state in
            say("listener", state == .ready ? "ready on port \(listener.port.map { "\($0)" } ?? "?")" : "state \(state)")
        }
        listener.onServiceRegistrationUpdate { _, change in
            switch change {
            case .add(let endpoint): say("listener", "advertised as \(endpoint)")
            case .remove(let endpoint): say("listener", "no longer advertised: \(endpoint)")
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await listener.run { connection in
                    say("listener", "a player connected from \(connection.remoteEndpoint.map { "\($0)" } ?? "?")")
                    for try await (message, _) in connection.messages {
                        say("listener", "<- \(message)")
                        let reply: GameMessage
                        switch message {
                        case .selectedCharacter(let character): reply = .selectedCharacter(character == "🐨" ? "🦊" : "🐨")
                        case .move(let row, let column): reply = .move(row: 2 - row, column: 2 - column)
                        }
                        say("listener", "-> \(reply)")
                        try await connection.send(reply)
                    }
                    say("listener", "the player left")
                }
            }
            try await playAgainst(name: name, type: type, pin: identity.certificateDER)
            group.cancelAll()
            // (`run` ends with CancellationError once its connections are closed.)
            while let result = await group.nextResult() {
                if case .failure(let error) = result, !(error is CancellationError) { throw error }
            }
        }
        say("demo", "OK: found by Bonjour, played over Coder and TLS, listener closed")
    }

    /// The player's side: browse, connect to what was found, play three messages.
    static func playAgainst(name: String, type: String, pin: [UInt8]) async throws {
        say("browser", "browsing for \(type)")
        let browser = NetworkBrowser(for: .bonjour(type))
        let endpoint = try await browser.run { endpoints -> NetworkBrowser<Bonjour>.RunResult<Bonjour.Endpoint> in
            guard let game = endpoints.first(where: { $0.name == name }) else { return .continue }
            return .finish(game)
        }
        say("browser", "found \"\(endpoint.name)\" in \(endpoint.domain) on \(endpoint.result.interfaces.map(\.name).joined(separator: ", "))")

        let expected = Data(pin)
        try await withNetworkConnection(to: endpoint.nwEndpoint, using: {
            Coder(GameMessage.self, using: .json) {
                TLS().certificateValidator { _, trust in
                    // A peer-to-peer game pins the certificate it was shown (nobody signed it).
                    let secTrust = sec_trust_copy_ref(trust).takeRetainedValue()
                    guard let chain = SecTrustCopyCertificateChain(secTrust) as? [SecCertificate], let leaf = chain.first else { return false }
                    return SecCertificateCopyData(leaf) as Data == expected
                }
            }
        }) { connection in
            connection.onStateUpdate { _, state in say("player", "state \(state)") }
            for message in [GameMessage.selectedCharacter("🐨"), .move(row: 0, column: 0), .move(row: 1, column: 2)] {
                say("player", "-> \(message)")
                try await connection.send(message)
                let (reply, _) = try await connection.receive()
                say("player", "<- \(reply)")
            }
            if let tls = connection.metadata(definition: NWProtocolTLS.definition) as? NWProtocolTLS.Metadata {
                let version = sec_protocol_metadata_get_negotiated_tls_protocol_version(tls.securityProtocolMetadata)
                say("player", "over \(version == .TLSv13 ? "TLS 1.3" : "TLS \(version)")")
            }
        }
    }
}
