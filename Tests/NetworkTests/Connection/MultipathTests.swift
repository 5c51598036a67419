#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import NIOCore
import PeerSupport
import Testing

@testable import Network

/// `multipathServiceType`: Multipath TCP sockets on both sides, MPTCP negotiated between two of
/// ours, plain TCP with a peer that does not speak it, nothing of it without the option.
@Suite("Connection.Multipath")
struct MultipathTests {
    /// The connection's socket: its protocol (`SO_PROTOCOL`) and whether MPTCP was negotiated
    /// (`MPTCP_INFO` answers only then).
    static func socketFacts(_ connection: NWConnection) async throws -> (protocolNumber: Int, negotiated: Bool) {
        let channel = try #require(try await connection.flow.inspect { $0.channel }.get(), "no channel")
        let protocolNumber = Int(try await channel.getOption(
            ChannelOptions.Types.SocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SO_PROTOCOL)).get())
        let provider = try #require(channel as? SocketOptionProvider)
        typealias Info = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
        let info: EventLoopFuture<Info> = provider.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel(rawValue: 284), name: NIOBSDSocket.Option(rawValue: 1))
        let negotiated = (try? await info.get()) != nil
        return (protocolNumber, negotiated)
    }

    static func multipath(_ type: NWParameters.MultipathServiceType) -> NWParameters {
        let parameters = NWParameters.tcp
        parameters.multipathServiceType = type
        return parameters
    }

    @Test("two of ours with multipath: MPTCP sockets on both ends, negotiated, data flows")
    func negotiatedBetweenOurs() async throws {
        let (listener, port) = try await TLSInteropTests.startEchoOnceListener(
            Self.multipath(.handover), queue: DispatchQueue(label: "mptcp-echo"))
        defer { listener.cancel() }
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.multipath(.interactive))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        #expect(await TLSInteropTests.exchange(connection, "over mptcp") == "over mptcp")
        let facts = try await Self.socketFacts(connection)
        #expect(facts.protocolNumber == 262, "IPPROTO_MPTCP")
        #expect(facts.negotiated, "MPTCP_INFO answers once both ends spoke MPTCP")
        connection.cancel()
    }

    @Test("multipath against a plain TCP server falls back to TCP and works; without the option, plain TCP")
    func fallbackAndDefault() async throws {
        let (listener, port) = try await TLSInteropTests.startEchoOnceListener(queue: DispatchQueue(label: "tcp-echo"))
        defer { listener.cancel() }
        let multipath = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.multipath(.aggregate))
        #expect(await TLSInteropTests.settle(multipath) == .ready)
        #expect(await TLSInteropTests.exchange(multipath, "fell back") == "fell back")
        let fallback = try await Self.socketFacts(multipath)
        #expect(fallback.protocolNumber == 262)
        #expect(!fallback.negotiated, "the server spoke plain TCP")
        multipath.cancel()

        let plain = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: .tcp)
        #expect(await TLSInteropTests.settle(plain) == .ready)
        #expect(try await Self.socketFacts(plain).protocolNumber == Int(IPPROTO_TCP))
        plain.cancel()
    }

    @Test("mobility: an MPTCP connection keeps carrying data after the link it started on goes down")
    func survivesLosingItsFirstLink() async throws {
        guard let client = TestNamespace.make(), let server = TestNamespace.make(), let nwcat = builtNWCat() else { return }
        defer { client.tearDown(); server.tearDown() }
        let ip = client.ip
        func run(_ arguments: [String]) throws { try ShortTool.check(ip, arguments) }
        // Two links between the namespaces: 10.72.1.0/24 (the one the connection starts on) and
        // 10.72.2.0/24 (announced as a subflow endpoint on the client).
        let (first, _) = try client.link(addresses: ["10.72.1.1/24"], to: server, otherAddresses: ["10.72.1.2/24"])
        let (second, _) = try client.link(addresses: ["10.72.2.1/24"], to: server, otherAddresses: ["10.72.2.2/24"], second: true)
        // The second subflow leaves from 10.72.2.1 towards the server's 10.72.1.2: over link 2.
        try run(["-n", client.name, "rule", "add", "from", "10.72.2.1", "table", "100"])
        try run(["-n", client.name, "route", "add", "10.72.1.0/24", "via", "10.72.2.2", "dev", second, "table", "100"])
        for namespace in [client, server] {
            try run(["-n", namespace.name, "mptcp", "limits", "set", "subflow", "2", "add_addr_accepted", "2"])
        }
        try run(["-n", client.name, "mptcp", "endpoint", "add", "10.72.2.1", "dev", second, "subflow"])

        let port = try freePort()
        _ = try server.start(nwcat, ["listen", "--multipath", "--echo", "\(port)"])
        try await server.waitUntilBound(port: port)

        // The client reads its standard input from a FIFO the test writes to, line by line.
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("mptcp-\(UUID().uuidString)").path
        try #require(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let connection = try PeerProcess(
            ip, ["netns", "exec", client.name, "/bin/sh", "-c", "exec \"$0\" \"$@\" < \"$FIFO\"".replacingOccurrences(of: "$FIFO", with: fifo),
                 nwcat, "connect", "--multipath", "10.72.1.2", "\(port)"])
        defer { connection.stop() }
        let writer = try await offload { () -> FileHandle in
            let fd = open(fifo, O_WRONLY)
            guard fd >= 0 else { throw SocketError("open fifo") }
            return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        }
        defer { try? writer.close() }

        try writer.write(contentsOf: Data("before\n".utf8))
        try await connection.waitForOutput(containing: "before")
        // Wait for the second subflow (a TCP socket from 10.72.2.1 in the client namespace).
        let deadline = Date().addingTimeInterval(10)
        while try client.run("/usr/bin/ss", ["-tnH", "src", "10.72.2.1"]).isEmpty {
            guard Date() < deadline else {
                Issue.record("no second subflow from 10.72.2.1 within 10 s")
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }

        try run(["-n", client.name, "link", "set", first, "down"])
        try writer.write(contentsOf: Data("after the first link went down\n".utf8))
        try await connection.waitForOutput(containing: "after the first link went down", timeout: 15)
    }
}
