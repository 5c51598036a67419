// The receive side of udp-offload.sh on our Network module, written as an app for Apple
// platforms receives datagrams: an NWListener whose new connections loop on receiveMessage, or
// one NWConnection bound to the local port and connected to the sender's fixed address. Every
// datagram counts in a DatagramCounter; all callbacks run on one serial DispatchQueue.
import BenchSupport
import Dispatch
import Foundation
import Network

/// Receives UDP on one port until the process ends.
public final class NWUDPReceiver: Sendable {
    public enum Mode: String, Sendable {
        /// `NWListener(using: .udp, on: port)`; the sender's first datagram makes a connection.
        case listener
        /// One `NWConnection` with `requiredLocalEndpoint` host:port, to host:peerPort.
        case connection
    }

    private let listener: NWListener?
    private let connection: NWConnection?

    /// Returns once the listener or connection is ready (bound); fails the process otherwise.
    /// `window`: receives pending per connection (1 = the usual receive-in-the-completion loop).
    public init(mode: Mode, host: String, port: Int, peerPort: Int, window: Int, counter: DatagramCounter) {
        guard let localPort = NWEndpoint.Port(rawValue: UInt16(clamping: port)), port > 0, port <= 65535,
            let remotePort = NWEndpoint.Port(rawValue: UInt16(clamping: peerPort)), peerPort > 0, peerPort <= 65535
        else { fail("udp-recv: bad port \(port) or peer port \(peerPort)") }
        let queue = DispatchQueue(label: "bench.udp-recv")
        let ready = Latch(count: 1)
        switch mode {
        case .listener:
            let listener: NWListener
            do {
                listener = try NWListener(using: .udp, on: localPort)
            } catch {
                fail("udp-recv: listener: \(error)")
            }
            listener.newConnectionHandler = { connection in
                connection.start(queue: queue)
                for _ in 0..<max(1, window) { Self.receiveLoop(connection, counter) }
            }
            listener.stateUpdateHandler = { state in
                switch state {
                case .ready: ready.countDown()
                case .failed(let error): fail("udp-recv: listener failed: \(error)")
                default: break
                }
            }
            listener.start(queue: queue)
            (self.listener, self.connection) = (listener, nil)
        case .connection:
            let parameters = NWParameters.udp
            parameters.requiredLocalEndpoint = .hostPort(host: NWEndpoint.Host(host), port: localPort)
            let connection = NWConnection(host: NWEndpoint.Host(host), port: remotePort, using: parameters)
            connection.stateUpdateHandler = { state in
                switch state {
                case .ready: ready.countDown()
                case .failed(let error), .waiting(let error): fail("udp-recv: connection: \(error)")
                default: break
                }
            }
            connection.start(queue: queue)
            for _ in 0..<max(1, window) { Self.receiveLoop(connection, counter) }
            (self.listener, self.connection) = (nil, connection)
        }
        if !ready.wait(timeout: 10) { fail("udp-recv: not ready within 10 s") }
    }

    /// One receive at a time: the next is issued from the completion of the previous.
    private static func receiveLoop(_ connection: NWConnection, _ counter: DatagramCounter) {
        connection.receiveMessage { content, _, _, error in
            if error != nil {
                counter.error()  // failed or cancelled: this chain ends
                return
            }
            if let content { counter.received(bytes: content.count) }
            receiveLoop(connection, counter)
        }
    }

    public func cancel() {
        self.listener?.cancel()
        self.connection?.cancel()
    }
}
