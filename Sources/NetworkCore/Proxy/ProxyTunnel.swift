import NIOCore
import NetworkSystem
import NetworkDNS

/// The one entry point the establishment calls to go through a proxy.
///
/// Usage, once TCP to the proxy's own address is connected (the proxy's `server` target is
/// resolved and connected like any other, with the flow's socket options):
///
/// ```swift
/// ProxyTunnel.establish(on: channel, to: configuration.target, via: proxy, timeout: remaining)
///     .flatMap { TLSStack.startClient(on: channel, settings: tls, hostName: hostName) }
/// ```
///
/// When the returned future succeeds, the proxy's handler has left the pipeline and the channel
/// carries the destination's bytes, so TLS (end to end, with the destination's name for SNI
/// and certificate checks) goes on top exactly as on a direct connection. Add those handlers
/// in a callback on the future (`flatMap`, `whenSuccess`), which runs on the channel's event
/// loop at once: bytes the proxy already passed on are fired from the head of the pipeline
/// right after the callbacks, so they reach whatever those callbacks added.
package enum ProxyTunnel {
    /// How long the proxy handshake may take when the caller has no connection timeout of its
    /// own. Direct attempts cannot hang forever (the kernel gives up on a SYN), but a proxy can
    /// accept and then say nothing; a minute is far beyond any working proxy's answer.
    package static let defaultHandshakeTimeout: TimeAmount = .seconds(60)

    /// Runs the proxy's handshake on `channel` (connected to the proxy) so that it ends up
    /// tunnelled to `target`.
    ///
    /// - `timeout`: what is left of the flow's connection timeout, if it has one; otherwise
    ///   ``defaultHandshakeTimeout`` applies. Expiry fails with `ETIMEDOUT`.
    /// - `ipVersion`: for `socks5://` (names resolved here), which addresses to use.
    ///
    /// Fails with a ``ProxyError`` (map it with `FlowError(_:)` or ``ProxyError/flowError``),
    /// or with the channel's own error; on failure the channel is closed.
    package static func establish(
        on channel: Channel,
        to target: FlowTarget,
        via proxy: ProxyDescription,
        timeout: TimeAmount? = nil,
        ipVersion: IPSocketSettings.Version = .any
    ) -> EventLoopFuture<Void> {
        let eventLoop = channel.eventLoop
        guard eventLoop.inEventLoop else {
            return eventLoop.flatSubmit {
                establish(on: channel, to: target, via: proxy, timeout: timeout, ipVersion: ipVersion)
            }
        }
        let deadline = NIODeadline.now() + (timeout ?? defaultHandshakeTimeout)
        let destination: Destination
        do {
            destination = try Destination(target)
        } catch {
            return fail(channel, error)
        }
        switch proxy.kind {
        case .unsupported(let what):
            return fail(channel, .unsupported(what))
        case .httpCONNECT(let tlsToProxy):
            let handshake: HTTPConnectClientHandshake
            do {
                handshake = try HTTPConnectClientHandshake(authority: destination.authority, credential: proxy.credential)
            } catch {
                return fail(channel, error)
            }
            guard tlsToProxy else { return install(handshake, on: channel, deadline: deadline) }
            return secureToProxy(channel, proxy: proxy, deadline: deadline).flatMap {
                install(handshake, on: channel, deadline: deadline)
            }
        case .socks5(let proxyResolvesNames):
            if let bytes = destination.addressBytes {
                let address: SOCKS5Address = bytes.count == 4 ? .ipv4(bytes) : .ipv6(bytes)
                return installSOCKS5(address, port: destination.port, proxy: proxy, on: channel, deadline: deadline)
            }
            if proxyResolvesNames {
                return installSOCKS5(
                    .domain(destination.host), port: destination.port, proxy: proxy, on: channel, deadline: deadline)
            }
            // socks5://: the name is resolved here and the proxy gets the first address.
            return DNSResolverAddressLookup().allAddresses(
                of: .hostPort(host: destination.host, port: Int(destination.port), interfaceName: nil),
                version: ipVersion, on: eventLoop
            ).flatMapError { error in
                channel.close(promise: nil)
                return eventLoop.makeFailedFuture(error)
            }.flatMap { addresses in
                guard let first = addresses.first, let text = first.ipAddress, let bytes = IPLiteral.bytes(text) else {
                    channel.close(promise: nil)
                    return eventLoop.makeFailedFuture(FlowError.dns(DNSServiceCode.noSuchRecord))
                }
                let address: SOCKS5Address = bytes.count == 4 ? .ipv4(bytes) : .ipv6(bytes)
                return installSOCKS5(address, port: destination.port, proxy: proxy, on: channel, deadline: deadline)
            }
        }
    }

    /// TLS with an HTTPS proxy: its own session at the front of the pipeline, verified with the
    /// proxy's settings against the proxy's name, then the boundary behind which the CONNECT
    /// and the destination's stack go. A proxy that stalls the handshake past `deadline` fails
    /// the attempt with `ETIMEDOUT`.
    private static func secureToProxy(
        _ channel: Channel, proxy: ProxyDescription, deadline: NIODeadline
    ) -> EventLoopFuture<Void> {
        let settings = proxy.tls?.configuration ?? FlowTLSConfiguration()
        let hostName = settings.serverName ?? proxy.server.hostName
        do {
            try channel.pipeline.syncOperations.addHandler(ProxyTLSBoundary(), position: .first)
        } catch {
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(error)
        }
        let timedOut = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
        let timer = channel.eventLoop.scheduleTask(deadline: deadline) {
            timedOut.value = true
            channel.close(promise: nil)
        }
        return TLSStack.startClient(
            on: channel, settings: settings, hostName: hostName, peer: channel.remoteAddress, atFront: true
        ).map { _ in
            timer.cancel()
        }.flatMapErrorThrowing { error in
            timer.cancel()
            channel.close(promise: nil)
            if timedOut.value { throw ProxyError.timedOut }
            throw error
        }
    }

    private static func installSOCKS5(
        _ address: SOCKS5Address, port: UInt16, proxy: ProxyDescription, on channel: Channel, deadline: NIODeadline
    ) -> EventLoopFuture<Void> {
        do {
            let handshake = try SOCKS5ClientHandshake(destination: address, port: port, credential: proxy.credential)
            return install(handshake, on: channel, deadline: deadline)
        } catch {
            return fail(channel, error)
        }
    }

    private static func install<Handshake: ProxyHandshake>(
        _ handshake: Handshake, on channel: Channel, deadline: NIODeadline
    ) -> EventLoopFuture<Void> {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        do {
            let handler = ProxyTunnelHandler(handshake: handshake, promise: promise, deadline: deadline)
            try channel.pipeline.syncOperations.addStackHandler(handler)
        } catch {
            channel.close(promise: nil)
            promise.fail(error)
        }
        return promise.futureResult
    }

    private static func fail(_ channel: Channel, _ error: ProxyError) -> EventLoopFuture<Void> {
        channel.close(promise: nil)
        return channel.eventLoop.makeFailedFuture(error)
    }

    /// The destination as a proxy needs it: a host (name or address) and a port.
    struct Destination: Equatable {
        /// A name, or an address in canonical text (no brackets, no zone).
        var host: String
        var port: UInt16
        /// Set when `host` is an address.
        var addressBytes: [UInt8]?

        init(_ target: FlowTarget) throws(ProxyError) {
            switch target {
            case .unix:
                throw .invalidTarget("a UNIX socket path cannot be reached through a proxy")
            case .address(let address):
                guard let text = address.ipAddress, let bytes = IPLiteral.bytes(text), let port = address.port else {
                    throw .invalidTarget("not an IP address")
                }
                try self.init(bytes: bytes, port: port)
            case .hostPort(let host, let port, _):
                if let bytes = IPLiteral.bytes(host) {
                    try self.init(bytes: bytes, port: port)
                } else {
                    guard Self.isHostName(host) else {
                        throw .invalidTarget("host names must be ASCII letters, digits, '-', '_' and '.', at most 255 bytes")
                    }
                    try self.init(host: host, addressBytes: nil, port: port)
                }
            }
        }

        private init(bytes: [UInt8], port: Int) throws(ProxyError) {
            try self.init(host: IPLiteral.text(bytes), addressBytes: bytes, port: port)
        }

        private init(host: String, addressBytes: [UInt8]?, port: Int) throws(ProxyError) {
            guard (1...65535).contains(port) else { throw .invalidTarget("port \(port) is out of range") }
            self.host = host
            self.port = UInt16(port)
            self.addressBytes = addressBytes
        }

        /// `host:port` for an HTTP request line and Host header, IPv6 in brackets.
        var authority: String {
            HostAuthority.authority(host, port: Int(port))
        }

        /// What may be sent as a name: it ends up in a request line or a length-prefixed SOCKS
        /// field, so anything that could break out of either (spaces, CR, LF, '@', '/') is
        /// refused here. Internationalised names must arrive already in their ASCII form.
        static func isHostName(_ host: String) -> Bool {
            let bytes = Array(host.utf8)
            guard !bytes.isEmpty, bytes.count <= 255 else { return false }
            return bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                    return true
                default:
                    return false
                }
            }
        }
    }
}
