import Foundation
import PeerSupport
import Testing

@testable import Network

/// Connection migration (RFC 9000 §9) of a QUIC client: two namespaces joined by two veth
/// pairs, aioquic's echo server in one, a client in the other (this binary again, as role
/// `quic-migration`, so that the path engine it follows sees the namespace's links and nothing
/// of this machine's). The client's first link goes down mid-connection; its route to the server
/// then takes the second link, and the connection must move there and go on.
@Suite("Connection.QUICMigration")
struct QUICMigrationTests {
    /// The two servers the client moves under: aioquic's, and ours (`nwcat listen --quic
    /// --echo`: the listener finds the connection by its ID when the client's packets come
    /// from the new address, and the connection's socket follows).
    enum Server: String, CaseIterable, Sendable {
        case aioquic, nwcat
    }

    @Test("a QUIC client whose first link goes down moves to its second: the stream goes on, the path handlers see the new interface, and the local endpoint is the new address", arguments: Server.allCases)
    func movesToTheSecondLink(_ kind: Server) async throws {
        guard let client = TestNamespace.make(), let server = TestNamespace.make() else { return }
        defer { client.tearDown(); server.tearDown() }
        let ip = client.ip
        func run(_ arguments: [String]) throws { try ShortTool.check(ip, arguments) }
        let (first, _) = try client.link(addresses: ["10.76.1.1/24"], to: server, otherAddresses: ["10.76.1.2/24"])
        let (second, _) = try client.link(addresses: ["10.76.2.1/24"], to: server, otherAddresses: ["10.76.2.2/24"], second: true)
        // The server's first address is also reachable over the second link, at a worse metric:
        // the route the client's traffic takes once the first link is down.
        try run(["-n", client.name, "route", "add", "10.76.1.0/24", "via", "10.76.2.2", "dev", second, "metric", "200"])
        // A link that is down carries nothing, so its routes must not be chosen (the kernel's
        // default keeps choosing them, marked "linkdown").
        for scope in ["all", "default", first] {
            try ShortTool.check(ip, ["netns", "exec", client.name, "/usr/sbin/sysctl", "-qw", "net.ipv4.conf.\(scope).ignore_routes_with_linkdown=1"])
        }
        let port: Int, certificate: [UInt8]
        var stop: [() -> Void] = []
        defer { for item in stop { item() } }
        switch kind {
        case .aioquic:
            guard let aioquic = try await AioquicServer.start(host: "10.76.1.2", namespace: server) else { return }
            stop.append(aioquic.stop)
            (port, certificate) = (aioquic.port, aioquic.certificate)
        case .nwcat:
            guard let nwcat = builtNWCat() else { return }
            let identity = try TLSInteropTests.Identity.make()
            stop.append { try? FileManager.default.removeItem(at: identity.directory) }
            port = 4433
            let listener = try server.start(nwcat, [
                "listen", "--quic", "--alpn", "echo", "--echo", "--cert", identity.certificatePath, "--key", identity.keyPath, "\(port)",
            ])
            stop.append(listener.stop)
            try await server.waitUntilBound(port: UInt16(port), udp: true)
            certificate = Array(try identity.certificateDER)
        }
        let outcome = try await NamespacedTestRun.run(
            filter: "QUICMigrationClientTests", role: "quic-migration", in: client, hostname: "nwquic-client",
            values: [
                "PORT": "\(port)", "CERTIFICATE": certificate.map { String(format: "%02x", $0) }.joined(),
                "LINK": first, "IP": ip,
            ])
        #expect(outcome.passed, "\(outcome)")
        print(outcome.output.split(separator: "\n").filter { $0.hasPrefix("quic-migration:") }.joined(separator: "\n"))
    }
}

/// The client side of `Connection.QUICMigration`, inside the client's namespace.
@Suite(
    "Connection.QUICMigrationClient",
    .enabled(if: NamespacedTestRun.role == "quic-migration", "runs inside a network namespace, started by Connection.QUICMigration"))
struct QUICMigrationClientTests {
    @Test("the stream echoes before and after the first link goes down; the connection moved to 10.76.2.1")
    func streamGoesOnOverTheSecondLink() async throws {
        let port = try #require(NamespacedTestRun.value("PORT").flatMap(UInt16.init))
        let hex = Array(try #require(NamespacedTestRun.value("CERTIFICATE")).utf8)
        let certificate = stride(from: 0, to: hex.count - 1, by: 2).compactMap { UInt8(String(decoding: hex[$0...$0 + 1], as: UTF8.self), radix: 16) }
        let link = try #require(NamespacedTestRun.value("LINK")), ip = try #require(NamespacedTestRun.value("IP"))

        let connection = NWConnection(
            host: "10.76.1.2", port: NWEndpoint.Port(rawValue: port)!, using: QUICConnectionTests.pinned(certificate))
        let paths = Recorder<NWPath>(), viability = Recorder<Bool>()
        connection.pathUpdateHandler = { paths.append($0) }
        connection.viabilityUpdateHandler = { viability.append($0) }
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        let before = connection.currentPath?.localEndpoint
        guard case .hostPort(.ipv4(let firstAddress), _)? = before else {
            Issue.record("local endpoint \(String(describing: before))")
            return
        }
        #expect(firstAddress == IPv4Address("10.76.1.1"))
        #expect(try await Self.echo(connection, "before the move") == "before the move")

        try ShortTool.check(ip, ["link", "set", link, "down"])
        #expect(try await Self.echo(connection, "after the first link went down") == "after the first link went down")
        let moved = try await paths.wait("a path over the second link") { paths in
            paths.contains { path in
                guard case .hostPort(.ipv4(let address), _)? = path.localEndpoint else { return false }
                return address == IPv4Address("10.76.2.1") && path.status == .satisfied
            }
        }
        #expect(connection.currentPath?.localEndpoint.map { "\($0)" }?.hasPrefix("10.76.2.1:") == true)
        #expect(viability.values.last == true)
        #expect(connection.state == .ready)
        print("quic-migration: paths \(moved.map { "\($0.status) \($0.localEndpoint.map { "\($0)" } ?? "-") \($0.availableInterfaces.map(\.name))" }), viability \(viability.values)")
    }

    /// Sends `text` and waits (10 s at most) for the server's echo of it.
    static func echo(_ connection: NWConnection, _ text: String) async throws -> String {
        let received = Recorder<Data>()
        connection.send(content: Data(text.utf8), completion: .contentProcessed { _ in })
        connection.receive(minimumIncompleteLength: text.utf8.count, maximumLength: 1024) { data, _, _, _ in
            received.append(data ?? Data())
        }
        let data = try await received.wait("the echo of \"\(text)\"") { !$0.isEmpty }
        return String(decoding: data[0], as: UTF8.self)
    }
}
