#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOCore
import Network
import PeerSupport
import Testing

extension BehaviourTests {
    /// Metadata, paths, reports and socket options of real connections.
    @Suite("Behaviour.Metadata")
    struct Metadata {
        @Test("metadata(definition: TCP) is NWProtocolTCP.Metadata on a TCP connection")
        func tcpMetadata() async throws {
            let (probe, peer, _) = try await StreamReceive.connectedPair()
            let metadata = probe.connection.metadata(definition: NWProtocolTCP.definition)
            let tcp = try #require(metadata as? NWProtocolTCP.Metadata, "got \(String(describing: metadata))")
            // Nothing sent yet: nothing waits in the send buffer.
            #expect(tcp.availableSendBuffer == 0)
            #expect(probe.connection.metadata(definition: NWProtocolUDP.definition) == nil)
            // Bytes the application has not received yet show up as available receive data.
            try peer.sendAll(pattern(1000))
            await pause(milliseconds: 200)
            let later = try #require(probe.connection.metadata(definition: NWProtocolTCP.definition) as? NWProtocolTCP.Metadata)
            #expect(later.availableReceiveBuffer == 1000)
            // 16 MiB to a peer that does not read: most of it waits in our send buffers.
            probe.connection.send(content: Data(count: 16 << 20), completion: .idempotent)
            await pause(milliseconds: 300)
            let full = try #require(probe.connection.metadata(definition: NWProtocolTCP.definition) as? NWProtocolTCP.Metadata)
            #expect(full.availableSendBuffer > 1 << 20, "unacknowledged bytes: \(full.availableSendBuffer)")
            try await probe.cancelAndWait()
        }

        @Test("metadata(definition: UDP) is NWProtocolUDP.Metadata on a UDP connection, and TCP's is nil")
        func udpMetadata() async throws {
            let (probe, _, _) = try await Datagram.connectedPair()
            #expect(probe.connection.metadata(definition: NWProtocolUDP.definition) is NWProtocolUDP.Metadata)
            #expect(probe.connection.metadata(definition: NWProtocolTCP.definition) == nil)
            try await probe.cancelAndWait()
        }

        @Test("currentPath is set when ready: endpoints and the loopback interface")
        func currentPathWhenReady() async throws {
            let server = try RawSocket.tcpServer()
            let probe = Probe(port: server.localPort)
            let paths = Recorder<NWPath>()
            probe.connection.pathUpdateHandler = { paths.append($0) }
            #expect(probe.connection.currentPath == nil)
            try await probe.startAndWaitReady()
            let peer = try await offload { try server.accept() }
            let path = try #require(probe.connection.currentPath)
            #expect(path.status == .satisfied)
            #expect(path.remoteEndpoint == .hostPort(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: server.localPort)!))
            #expect(path.localEndpoint == .hostPort(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: peer.remotePort)!))
            #expect(path.availableInterfaces.contains { $0.type == .loopback }, "interfaces: \(path.availableInterfaces)")
            #expect(path.usesInterfaceType(.loopback))
            let delivered = try await paths.wait(count: 1, "pathUpdateHandler")
            #expect(delivered[0] == path)
            try await probe.cancelAndWait()
        }

        @Test("requestEstablishmentReport: nil before ready; after, duration ≥ 0 and a TCP handshake")
        func establishmentReport() async throws {
            let server = try RawSocket.tcpServer()
            let probe = Probe(port: server.localPort)
            let early = Recorder<NWConnection.EstablishmentReport?>()
            probe.connection.requestEstablishmentReport(queue: .global()) { early.append($0) }
            #expect(try await early.wait(count: 1, "report before start")[0] == nil)

            try await probe.startAndWaitReady()
            let reports = Recorder<NWConnection.EstablishmentReport?>()
            probe.connection.requestEstablishmentReport(queue: .global()) { reports.append($0) }
            let report = try #require(try await reports.wait(count: 1, "report")[0])
            #expect(report.duration >= 0)
            #expect(report.duration < SanitizerSlowdown.seconds(10))
            #expect(report.attemptStartedAfterInterval >= 0)
            #expect(report.previousAttemptCount == 0)
            #expect(report.usedProxy == false)
            #expect(report.handshakes.contains { $0.definition == NWProtocolTCP.definition }, "handshakes: \(report.handshakes.map(\.definition))")
            for handshake in report.handshakes { #expect(handshake.handshakeDuration >= 0) }
            try await probe.cancelAndWait()
        }

        @Test("the state getter equals the last delivered state")
        func stateGetterMatchesLastDelivered() async throws {
            let server = try RawSocket.tcpServer()
            let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: server.localPort)!, using: .tcp)
            struct Pair: Sendable {
                let delivered: NWConnection.State
                let getter: NWConnection.State
            }
            let pairs = Recorder<Pair>()
            connection.stateUpdateHandler = { state in pairs.append(Pair(delivered: state, getter: connection.state)) }
            #expect(connection.state == .setup)
            connection.start(queue: DispatchQueue(label: "getter"))
            try await pairs.wait("ready") { $0.contains { $0.delivered == .ready } }
            #expect(connection.state == .ready)
            connection.cancel()
            let all = try await pairs.wait("cancelled") { $0.contains { $0.delivered == .cancelled } }
            #expect(connection.state == .cancelled)
            // In the handler for the final state, the getter already agrees.
            #expect(all.last?.getter == .cancelled)
            #expect(all.map(\.delivered) == [.preparing, .ready, .cancelled])
        }
    }

    /// TCP options set through NWProtocolTCP.Options, read back from the real socket.
    @Suite("Behaviour.TCPOptions")
    struct TCPOptions {
        static func socketOption(_ connection: NWConnection, _ level: Int32, _ name: Int32) async throws -> Int {
            let channel = try #require(try await connection.flow.inspect { $0.channel }.get(), "the connection has no channel")
            return Int(try await channel.getOption(
                ChannelOptions.Types.SocketOption(level: SocketOptionLevel(level), name: name)).get())
        }

        @Test("noDelay, keepalive, keepaliveIdle/Interval/Count reach the socket")
        func optionsReadBack() async throws {
            let tcp = NWProtocolTCP.Options()
            tcp.noDelay = true
            tcp.enableKeepalive = true
            tcp.keepaliveIdle = 30
            tcp.keepaliveInterval = 7
            tcp.keepaliveCount = 4
            let (probe, _, _) = try await StreamReceive.connectedPair(parameters: NWParameters(tls: nil, tcp: tcp))
            #expect(try await Self.socketOption(probe.connection, Int32(IPPROTO_TCP), TCP_NODELAY) != 0)
            #expect(try await Self.socketOption(probe.connection, SOL_SOCKET, SO_KEEPALIVE) != 0)
            #expect(try await Self.socketOption(probe.connection, Int32(IPPROTO_TCP), TCP_KEEPIDLE) == 30)
            #expect(try await Self.socketOption(probe.connection, Int32(IPPROTO_TCP), TCP_KEEPINTVL) == 7)
            #expect(try await Self.socketOption(probe.connection, Int32(IPPROTO_TCP), TCP_KEEPCNT) == 4)
            try await probe.cancelAndWait()
        }

        @Test("default options leave Nagle on (TCP_NODELAY 0) and keepalive off, as Apple does")
        func defaultsReadBack() async throws {
            let (probe, _, _) = try await StreamReceive.connectedPair()
            #expect(try await Self.socketOption(probe.connection, Int32(IPPROTO_TCP), TCP_NODELAY) == 0)
            #expect(try await Self.socketOption(probe.connection, SOL_SOCKET, SO_KEEPALIVE) == 0)
            try await probe.cancelAndWait()
        }

        @Test("connectionDropTime, MSS and service class reach the socket")
        func moreOptionsReadBack() async throws {
            let tcp = NWProtocolTCP.Options()
            tcp.connectionDropTime = 12
            tcp.maximumSegmentSize = 1000
            let parameters = NWParameters(tls: nil, tcp: tcp)
            parameters.serviceClass = .interactiveVoice
            let (probe, _, _) = try await StreamReceive.connectedPair(parameters: parameters)
            #expect(try await Self.socketOption(probe.connection, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT) == 12_000)
            let mss = try await Self.socketOption(probe.connection, Int32(IPPROTO_TCP), TCP_MAXSEG)
            #expect(mss > 0 && mss <= 1000)
            // EF (46) in the upper six bits of the TOS byte.
            #expect(try await Self.socketOption(probe.connection, Int32(IPPROTO_IP), IP_TOS) & 0xfc == 46 << 2)
            try await probe.cancelAndWait()
        }

        @Test("a data-transfer report counts application and transport bytes and the RTT")
        func dataTransferReport() async throws {
            let (probe, peer, _) = try await StreamReceive.connectedPair()
            let pending = probe.connection.startDataTransferReport()
            #expect(try await probe.send(pattern(100_000)) == nil)
            _ = try peer.receiveExactly(100_000)
            try peer.sendAll(pattern(3000))
            var received = 0
            while received < 3000 {
                let chunk = try await probe.receive(minimum: 1, maximum: 65_536)
                received += chunk.bytes.count
            }
            let report: NWConnection.DataTransferReport = await withCheckedContinuation { continuation in
                pending.collect(queue: DispatchQueue(label: "report")) { continuation.resume(returning: $0) }
            }
            let path = report.aggregatePathReport
            #expect(path.sentApplicationByteCount == 100_000)
            #expect(path.receivedApplicationByteCount == 3000)
            #expect(path.sentTransportByteCount >= 100_000)
            #expect(path.receivedTransportByteCount >= 3000)
            #expect(path.sentIPPacketCount > 0)
            #expect(path.transportSmoothedRTT > 0)
            #expect(report.duration > 0)
            #expect(report.pathReports.count == 1)
            try await probe.cancelAndWait()
        }

        @Test("setMaximumPacingRateBytesPerSecond sets SO_MAX_PACING_RATE; nil removes the cap")
        func pacingRate() async throws {
            let (probe, _, _) = try await StreamReceive.connectedPair()
            let metadata = try #require(probe.connection.metadata(definition: NWProtocolTCP.definition) as? NWProtocolTCP.Metadata)
            metadata.setMaximumPacingRateBytesPerSecond(1_000_000)
            var rate = 0
            for _ in 0..<100 where rate != 1_000_000 {
                try await Task.sleep(for: .milliseconds(10))
                rate = try await Self.socketOption(probe.connection, SOL_SOCKET, 47)
            }
            #expect(rate == 1_000_000)
            metadata.setMaximumPacingRateBytesPerSecond(nil)
            for _ in 0..<100 where rate == 1_000_000 {
                try await Task.sleep(for: .milliseconds(10))
                rate = try await Self.socketOption(probe.connection, SOL_SOCKET, 47)
            }
            #expect(UInt32(truncatingIfNeeded: rate) == UInt32.max)
            try await probe.cancelAndWait()
        }

        @Test("an accepted connection gets the listener's TCP options")
        func acceptedConnectionOptions() async throws {
            let tcp = NWProtocolTCP.Options()
            tcp.noDelay = true
            tcp.enableKeepalive = true
            tcp.keepaliveIdle = 45
            let listener = try ListenerProbe(parameters: NWParameters(tls: nil, tcp: tcp))
            let port = try await listener.startAndWaitReady()
            let client = try RawSocket()
            try await offload { try client.connect(port: port) }
            let connection = try await listener.connections.wait(count: 1, "inbound")[0]
            let states = Recorder<NWConnection.State>()
            connection.stateUpdateHandler = { states.append($0) }
            connection.start(queue: DispatchQueue(label: "accepted"))
            try await states.wait("ready") { $0.contains(.ready) }
            #expect(try await Self.socketOption(connection, Int32(IPPROTO_TCP), TCP_NODELAY) != 0)
            #expect(try await Self.socketOption(connection, SOL_SOCKET, SO_KEEPALIVE) != 0)
            #expect(try await Self.socketOption(connection, Int32(IPPROTO_TCP), TCP_KEEPIDLE) == 45)
            connection.cancel()
            try await states.wait("cancelled") { $0.contains(.cancelled) }
            try await listener.cancelAndWait()
        }
    }
}
