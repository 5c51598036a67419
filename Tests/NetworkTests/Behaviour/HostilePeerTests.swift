#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

/// Listeners facing peers that mean harm, each played here by a raw socket and measured: TLS
/// handshakes that never finish, a flood of UDP datagrams from forged source addresses, peers
/// that reset as soon as they connect, and a client that writes to an echo server without ever
/// reading. Each must leave the listener bounded and still serving.
@Suite("Behaviour.HostilePeers", .serialized)
struct HostilePeerTests {
    /// The resident memory of process `pid`, in bytes.
    static func residentBytes(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    @Test("TLS handshakes that stall (half a ClientHello, or nothing) end with ETIMEDOUT after the listener's connectionTimeout, and their sockets close")
    func stalledTLSHandshakesTimeOut() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let tcp = NWProtocolTCP.Options()
        tcp.connectionTimeout = 2
        let listener = try NWListener(using: NWParameters(tls: try identity.serverOptions(), tcp: tcp))
        let queue = DispatchQueue(label: "hostile-tls")
        let failures = Recorder<NWError>()
        listener.newConnectionHandler = { connection in
            connection.stateUpdateHandler = { state in
                if case .failed(let error) = state {
                    failures.append(error)
                    connection.cancel()
                }
            }
            connection.start(queue: queue)
        }
        let port = try await TLSInteropTests.start(listener, queue: queue)
        defer { listener.cancel() }

        // A TLS record header announcing a 512-byte handshake message, and the first bytes of
        // a ClientHello: the server waits for the rest, which never comes.
        let partialHello: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03]
        let started = Date()
        var attackers: [RawSocket] = []
        for index in 0..<40 {
            let socket = try RawSocket()
            try socket.connect(port: port)
            if index % 2 == 0 { try socket.sendAll(partialHello) }
            attackers.append(socket)
        }
        let errors = try await failures.wait(count: 40, "40 stalled handshakes fail", timeout: SanitizerSlowdown.seconds(20))
        let elapsed = Date().timeIntervalSince(started)
        print("HostilePeers: 40 stalled TLS handshakes failed after \(String(format: "%.2f", elapsed)) s with \(Set(errors.map(\.debugDescription)))")
        #expect(errors.allSatisfy { $0 == .posix(.ETIMEDOUT) }, "\(errors)")
        #expect(elapsed >= 1.9, "no handshake may be cut short of the 2 s timeout")
        #expect(elapsed < SanitizerSlowdown.seconds(10), "every handshake ends soon after its timeout")
        // The server closed every one of them: each attacker reads the end (or a reset). One
        // deadline for all: the closes follow the failures on the same loop turn, but a loaded
        // machine (CI's parallel run once stalled this listener's loop for seconds) may deliver
        // them late, and a socket never closed still fails here.
        let deadline = Date().addingTimeInterval(SanitizerSlowdown.seconds(15))
        for attacker in attackers {
            let result = attacker.receive(timeout: max(0.1, deadline.timeIntervalSinceNow))
            #expect(result == .endOfStream || result == .error(ECONNRESET), "\(result)")
        }
    }

    @Test("200 peers that reset right after connecting: every connection handed over knows its peer's address and port")
    func resetAfterConnectKeepsEndpoint() async throws {
        let listener = try NWListener(using: .tcp)
        let queue = DispatchQueue(label: "hostile-reset")
        let endpoints = Recorder<NWEndpoint>()
        listener.newConnectionHandler = { connection in
            endpoints.append(connection.endpoint)
            connection.cancel()
        }
        let port = try await TLSInteropTests.start(listener, queue: queue)
        defer { listener.cancel() }
        var sourcePorts: Set<UInt16> = []
        for index in 0..<200 {
            let socket = try RawSocket()
            try socket.connect(port: port)
            sourcePorts.insert(socket.localPort)
            // Reset at once, or up to 2 ms later: before the accept, between the accept and the
            // hand-over, or after it.
            if index % 3 != 0 { try await Task.sleep(for: .microseconds(500 * (index % 5))) }
            socket.resetAndClose()
        }
        // One more resets only once it has been handed over: on a loaded machine all 200 above
        // can be reset before the listener's first accept (0 handed over, seen in a parallel run).
        let last = try RawSocket()
        try last.connect(port: port)
        sourcePorts.insert(last.localPort)
        _ = try await endpoints.wait("the last peer's connection handed over", timeout: 10) { seen in
            seen.contains { if case .hostPort(_, let port) = $0 { port.rawValue == last.localPort } else { false } }
        }
        last.resetAndClose()
        // Some may be dropped unseen (reset before they were accepted); none may come from nowhere.
        try await Task.sleep(for: .milliseconds(500))
        let seen = endpoints.values
        print("HostilePeers: 200 connect-and-reset peers, \(seen.count) handed over")
        for endpoint in seen {
            guard case .hostPort(let host, let port) = endpoint else {
                Issue.record("not a host and port: \(endpoint)")
                continue
            }
            #expect(host == .ipv4(.loopback), "\(endpoint)")
            #expect(sourcePorts.contains(port.rawValue), "\(endpoint) is not one of the attacker's ports")
        }
    }

    /// Datagrams the kernel dropped on the UDP socket bound to `port` (its receive buffer was
    /// full), from the last column of /proc/net/udp and udp6.
    static func kernelDrops(port: UInt16) -> Int {
        udpSocketRows(port: port).reduce(0) { $0 + (Int($1[$1.count - 1]) ?? 0) }
    }

    /// Bytes waiting in the receive buffer of the UDP socket bound to `port`.
    static func receiveQueueBytes(port: UInt16) -> Int {
        udpSocketRows(port: port).reduce(0) { total, fields in
            // "tx_queue:rx_queue", in hex.
            total + (fields[4].split(separator: ":").last.flatMap { Int($0, radix: 16) } ?? 0)
        }
    }

    private static func udpSocketRows(port: UInt16) -> [[Substring]] {
        let hexPort = String(format: ":%04X", port)
        var rows: [[Substring]] = []
        for file in ["/proc/net/udp", "/proc/net/udp6"] {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                if fields.count > 5, fields[1].hasSuffix(hexPort) { rows.append(fields) }
            }
        }
        return rows
    }

    @Test("100,000 forged UDP source addresses (30,000 under a sanitizer): nwcat listen --udp --echo grows by a bounded amount and serves a real client once the flood's peers idle out")
    func spoofedUDPFloodIsBounded() async throws {
        guard let nwcat = builtNWCat() else { return }
        let server = try ToolProcess(nwcat, ["listen", "0", "--udp", "--echo"])
        defer { server.stop() }
        let port = try UInt16(#require(UInt16(try await server.waitForStandardError(matching: "ready on port ([0-9]+)"))))
        let pid = server.process.processIdentifier
        let before = try #require(Self.residentBytes(of: pid))
        let spoofer = try SpoofedDatagramSender()
        let payload = [UInt8](repeating: 0x41, count: 32)
        // 100,000 distinct (address, port) pairs in 127.1.0.0/16, in bursts of 100, each sent
        // once the listener has read the one before: the socket's receive buffer would drop most
        // of a flood the listener cannot keep up with, and those never test its bounds. Under a
        // sanitizer 30,000, still well past the 8,192-peer bound (100,000 took 2 of a CI run's
        // 9 sanitizer minutes).
        let forged = SanitizerSlowdown.factor > 1 ? 30_000 : 100_000
        var peak = before
        for index in 0..<forged {
            let source = UInt32(0x7F01_0000) | UInt32(index / 50_000 + 1) << 8 | UInt32(index % 200)
            let sourcePort = UInt16(1024 + (index / 200) % 60_000)
            try spoofer.send(to: port, from: source, sourcePort: sourcePort, payload: payload)
            if index % 100 == 99 {
                let deadline = Date().addingTimeInterval(0.2)
                while Self.receiveQueueBytes(port: port) > 0 && Date() < deadline { try await Task.sleep(for: .microseconds(200)) }
                if index % 10_000 == 9_999, let now = Self.residentBytes(of: pid) { peak = max(peak, now) }
            }
        }
        try await Task.sleep(for: .seconds(1))
        let after = try #require(Self.residentBytes(of: pid))
        peak = max(peak, after)
        let growth = peak - before
        let delivered = forged - Self.kernelDrops(port: port)
        print("HostilePeers: nwcat --udp --echo RSS \(before / 1024) KiB → peak \(peak / 1024) KiB after \(delivered) datagrams from \(forged) forged peers reached it (+\(growth / 1_048_576) MiB)")
        #expect(delivered > 12_000, "the flood must reach the listener well past its 8,192 peers to test the bound")
        // 8,192 peers at most (DatagramPeerLimits), each a connection of about 1.5 KiB in nwcat
        // (measured: +12 MiB; without the bound, every one of the 100,000 stayed).
        // Under AddressSanitizer the nwcat child is instrumented too: its 64 MiB quarantine of
        // freed blocks, shadow memory and per-allocation redzones come on top (measured 220 and
        // 259 MiB in two CI runs, about 32 KiB per kept peer). The bound still tells a bounded
        // table from an unbounded one, which would keep all 30,000 peers: about 1 GiB there.
        let underASan = ProcessInfo.processInfo.environment["NETWORK_TEST_SANITIZER"] == "address"
        let bound = underASan ? 400 * 1_048_576 : SanitizerSlowdown.residentBytes(32 * 1_048_576)
        #expect(growth < bound, "grew by \(growth) bytes")

        // Once the flood's peers have been idle for 10 s, a real client takes a slot.
        try await Task.sleep(for: .seconds(11))
        let client = try RawSocket.udpPeer()
        var echoed = false
        for _ in 0..<5 where !echoed {
            try client.send(to: port, Array("still serving".utf8))
            if let reply = try client.receiveFrom(timeout: 1) { echoed = reply.bytes == Array("still serving".utf8) }
        }
        #expect(echoed, "a real client is served after the flood")
    }

    @Test("a client that writes to nwcat listen --echo without reading stalls itself: the echo server's memory stays bounded")
    func echoWithoutReadingIsBounded() async throws {
        guard let nwcat = builtNWCat() else { return }
        let server = try ToolProcess(nwcat, ["listen", "0", "--echo"])
        defer { server.stop() }
        let port = try UInt16(#require(UInt16(try await server.waitForStandardError(matching: "ready on port ([0-9]+)"))))
        let pid = server.process.processIdentifier
        let before = try #require(Self.residentBytes(of: pid))
        let client = try RawSocket()
        try client.connect(port: port)
        let flags = fcntl(client.fd, F_GETFL)
        _ = fcntl(client.fd, F_SETFL, flags | O_NONBLOCK)
        let chunk = [UInt8](repeating: 0x42, count: 1 << 20)
        var written = 0
        // Up to 1 GiB, until the connection has taken nothing for 2 s.
        while written < 1 << 30 {
            let count = chunk.withUnsafeBytes { write(client.fd, $0.baseAddress, $0.count) }
            if count > 0 {
                written += count
                continue
            }
            guard errno == EAGAIN || errno == EWOULDBLOCK else { throw SocketError("write") }
            if !client.waitWritable(timeout: 2) { break }
        }
        let after = try #require(Self.residentBytes(of: pid))
        let growth = after - before
        print("HostilePeers: a client that never reads got \(written / 1_048_576) MiB into nwcat --echo before stalling; nwcat grew by \(growth / 1_048_576) MiB")
        #expect(written < 256 * 1_048_576, "the echo server kept reading: \(written) bytes taken")
        #expect(growth < SanitizerSlowdown.residentBytes(64 * 1_048_576), "grew by \(growth) bytes")
    }
}
