#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix
import NetworkSystem

/// Facts about a flow and its socket, for reports, metadata and tests.
extension Flow {
    /// Sets an integer socket option on the flow's socket, if it has one of its own.
    package func setSocketOption(level: Int32, name: Int32, value: Int32) {
        submit {
            guard case .owned(let channel) = self.transport else { return }
            try? channel.syncOptions?.setOption(
                ChannelOptions.Types.SocketOption(level: SocketOptionLevel(level), name: name),
                value: SocketOptionValue(value))
        }
    }

    /// The kernel's TCP_INFO for the flow's socket; nil for datagram flows or without a socket.
    package func tcpInfo() -> EventLoopFuture<LinuxTCPInfo?> {
        eventLoop.submit { self.tcpInfoOnLoop() }
    }

    /// Runs `body` on the flow's loop with a snapshot of its transport facts.
    package func inspect<T: Sendable>(_ body: @escaping @Sendable (FlowSnapshot) -> T) -> EventLoopFuture<T> {
        eventLoop.submit { body(self.snapshot()) }
    }

    /// The peer's address, on the loop. A Fast Open connect is deferred, so NIO never learnt the
    /// peer's address: it is then the address that won the race (or the literal target).
    var peerAddress: SocketAddress? {
        if let remote = transport.remoteAddress { return remote }
        return transport.channel == nil ? nil : report.resolution?.successful
    }

    private func snapshot() -> FlowSnapshot {
        let channel = transport.channel
        return FlowSnapshot(
            state: machine.state, localAddress: localAddressOnLoop, remoteAddress: peerAddress, channel: channel,
            report: report)
    }
}
