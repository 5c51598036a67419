#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOSSL
import NIOTLS
import NetworkDNS
import NetworkSync

/// Puts NIOSSL into a flow's pipeline and waits for the handshake: the flow is ready only once
/// the top of its stack is.
enum TLSStack {
    /// The suites swift-nio-ssl's BoringSSL offers (its `NIOTLSCipher` constants).
    static let supportedCipherSuites: Set<UInt16> = [
        0x002F, 0x0035, 0x008C, 0x008D, 0x009C, 0x009D, 0x1301, 0x1302, 0x1303, 0xC009, 0xC00A, 0xC013, 0xC014,
        0xC035, 0xC036, 0xC02B, 0xC02C, 0xC02F, 0xC030, 0xCCA8, 0xCCA9,
    ]

    static func nioVersion(_ wire: UInt16?) -> TLSVersion? {
        switch wire {
        case 0x0301: return .tlsv1
        case 0x0302: return .tlsv11
        case 0x0303: return .tlsv12
        case 0x0304: return .tlsv13
        default: return nil
        }
    }

    static func wireVersion(_ version: TLSVersion?) -> UInt16? {
        switch version {
        case .tlsv1: return 0x0301
        case .tlsv11: return 0x0302
        case .tlsv12: return 0x0303
        case .tlsv13: return 0x0304
        case nil: return nil
        }
    }

    private static func apply(_ settings: FlowTLSConfiguration, to configuration: inout TLSConfiguration) throws {
        configuration.minimumTLSVersion = nioVersion(settings.minimumVersion) ?? .tlsv12
        if let maximum = nioVersion(settings.maximumVersion) {
            configuration.maximumTLSVersion = maximum
        } else if !settings.preSharedKeys.isEmpty {
            // These PSKs are TLS 1.2 external keys.
            configuration.maximumTLSVersion = .tlsv12
        }
        // BoringSSL knows a fixed set of suites (and would crash on others): keep those. Apple's
        // peer-to-peer samples ask for TLS_PSK_WITH_AES_128_GCM_SHA256, which BoringSSL lacks;
        // PSK sessions then use its PSK suites instead of failing.
        let usable = settings.cipherSuites.filter(supportedCipherSuites.contains)
        if !usable.isEmpty {
            configuration.cipherSuiteValues = usable.map { NIOTLSCipher(rawValue: $0) }
        } else if !settings.preSharedKeys.isEmpty {
            configuration.cipherSuiteValues = [
                .TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA, .TLS_ECDHE_PSK_WITH_AES_256_CBC_SHA,
                .TLS_PSK_WITH_AES_128_CBC_SHA, .TLS_PSK_WITH_AES_256_CBC_SHA,
            ]
        }
        if let first = settings.preSharedKeys.first {
            let keys = settings.preSharedKeys
            configuration.pskClientProvider = { _ in
                var secret = NIOSSLSecureBytes()
                secret.append(first.key)
                return PSKClientIdentityResponse(key: secret, identity: first.identity)
            }
            configuration.pskServerProvider = { context in
                guard let match = keys.first(where: { $0.identity == context.clientIdentity }) else {
                    throw FlowError.tls(TLSStatus.badCertificate)
                }
                var secret = NIOSSLSecureBytes()
                secret.append(match.key)
                return PSKServerIdentityResponse(key: secret)
            }
        }
        configuration.applicationProtocols = settings.applicationProtocols
        if let key = settings.privateKey, !settings.certificateChain.isEmpty {
            configuration.certificateChain = try settings.certificateChain.map {
                .certificate(try NIOSSLCertificate(bytes: $0, format: .der))
            }
            configuration.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: key, format: .der))
        }
    }

    /// Contexts are costly to build (the system trust store is parsed each time) and safe to
    /// share, so connections with the same settings share one.
    private static let contextCache = Lock<[ContextKey: NIOSSLContext]>([:])

    private struct ContextKey: Hashable {
        var server: Bool
        var minimumVersion: UInt16?
        var maximumVersion: UInt16?
        var applicationProtocols: [String]
        var certificateChain: [[UInt8]]
        var privateKey: [UInt8]?
        var peerAuthenticationRequired: Bool?
        var peerAuthenticationOptional: Bool
        var preSharedKeys: [[UInt8]]
        var identities: [String]
        var cipherSuites: [UInt16]
        var hasVerifyBlock: Bool

        init(_ settings: FlowTLSConfiguration, server: Bool) {
            self.server = server
            minimumVersion = settings.minimumVersion
            maximumVersion = settings.maximumVersion
            applicationProtocols = settings.applicationProtocols
            certificateChain = settings.certificateChain
            privateKey = settings.privateKey
            peerAuthenticationRequired = settings.peerAuthenticationRequired
            peerAuthenticationOptional = settings.peerAuthenticationOptional
            preSharedKeys = settings.preSharedKeys.map(\.key)
            identities = settings.preSharedKeys.map(\.identity)
            cipherSuites = settings.cipherSuites
            hasVerifyBlock = settings.verify != nil
        }
    }

    private static func cachedContext(
        _ settings: FlowTLSConfiguration, server: Bool, make: () throws -> NIOSSLContext
    ) throws -> NIOSSLContext {
        let key = ContextKey(settings, server: server)
        if let context = contextCache.withLock({ $0[key] }) { return context }
        let context = try make()
        contextCache.withLock { cache in
            if cache.count >= 64 { cache.removeAll() }  // bounded: settings rarely vary this much
            cache[key] = context
        }
        return context
    }

    static func clientContext(_ settings: FlowTLSConfiguration) throws -> NIOSSLContext {
        try cachedContext(settings, server: false) { try makeClientContext(settings) }
    }

    static func serverContext(_ settings: FlowTLSConfiguration) throws -> NIOSSLContext {
        try cachedContext(settings, server: true) { try makeServerContext(settings) }
    }

    private static func makeClientContext(_ settings: FlowTLSConfiguration) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        try apply(settings, to: &configuration)
        if settings.peerAuthenticationRequired == false || (!settings.preSharedKeys.isEmpty && settings.verify == nil) {
            // Explicitly insecure, or a PSK session: the shared key authenticates the server,
            // which presents no certificate.
            configuration.certificateVerification = .none
        } else {
            // The chain is checked here (or by the verify block, which then decides alone, as
            // on Apple); the host name is checked by `startClient` (HostNameCheck).
            configuration.certificateVerification = .noHostnameVerification
        }
        return try NIOSSLContext(configuration: configuration)
    }

    private static func makeServerContext(_ settings: FlowTLSConfiguration) throws -> NIOSSLContext {
        var configuration: TLSConfiguration
        if let key = settings.privateKey, !settings.certificateChain.isEmpty {
            configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try settings.certificateChain.map { .certificate(try NIOSSLCertificate(bytes: $0, format: .der)) },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: key, format: .der)))
        } else if !settings.preSharedKeys.isEmpty {
            // A pure PSK server needs no certificate.
            configuration = TLSConfiguration.makePreSharedKeyConfiguration()
        } else {
            // A TLS server needs an identity (sec_protocol_options_set_local_identity) or a PSK.
            throw FlowError.tls(TLSStatus.badCertificate)
        }
        try apply(settings, to: &configuration)
        if settings.peerAuthenticationRequired == true {
            configuration.certificateVerification = settings.verify == nil ? .fullVerification : .noHostnameVerification
        } else if settings.asksOptionalClientCertificate {
            // Asked for; checked when presented (by the verify block, if any); none is fine.
            configuration.certificateVerification = .optionalVerification
        } else {
            configuration.certificateVerification = .none
        }
        return try NIOSSLContext(configuration: configuration)
    }

    /// Adds a client handler in front of the flow's handler and completes with the session once
    /// the handshake is done (or with a `.tls` error).
    /// `atFront`: at the very front of the pipeline (TLS with an HTTPS proxy); `before`: right
    /// below that handler (TLS a framer prepended, above the framer); otherwise where the stack's
    /// handlers go (`addStackHandler`: behind such a proxy session, if any).
    static func startClient(
        on channel: Channel, settings: FlowTLSConfiguration, hostName: String?, peer: SocketAddress? = nil,
        atFront: Bool = false, before: (any ChannelHandler)? = nil
    ) -> EventLoopFuture<TLSSessionFacts> {
        channel.eventLoop.assertInEventLoop()
        do {
            let context = try clientContext(settings)
            // SNI carries names only; an address literal is verified by the verify block if any.
            let sniName = hostName.flatMap { SocketAddress(literal: $0, port: 0) == nil ? $0 : nil }
            let presented = PresentedChain()
            let handler: NIOSSLClientHandler
            if let verify = settings.verify {
                handler = try NIOSSLClientHandler(context: context, serverHostname: sniName) { certificates, promise in
                    let chain = certificates.compactMap { try? $0.toDERBytes() }
                    presented.chain = chain
                    verify(chain) { trusted in
                        NetworkLog.tls.debug("verify block says \(trusted ? "trusted" : "not trusted")")
                        promise.succeed(trusted ? .certificateVerified : .failed)
                    }
                }
            } else {
                handler = try NIOSSLClientHandler(context: context, serverHostname: sniName)
            }
            if atFront {
                try channel.pipeline.syncOperations.addHandler(handler, position: .first)
            } else if let before {
                try channel.pipeline.syncOperations.addHandler(handler, position: .before(before))
            } else {
                try channel.pipeline.syncOperations.addStackHandler(handler)
            }
            let handshake = wait(for: handler, on: channel, presented: presented, serverName: sniName, verifyBlock: settings.verify != nil)
            // Default verification names the server: the name asked for, else the address.
            let checksName = settings.verify == nil && settings.peerAuthenticationRequired != false && settings.preSharedKeys.isEmpty
            guard checksName, let name = hostName ?? peer?.ipAddress else { return handshake }
            return handshake.flatMapThrowing { facts in
                guard let leaf = facts.peerCertificates.first, HostNameCheck.matches(leaf: leaf, name: name) else {
                    NetworkLog.tls.debug("certificate does not name \(name)")
                    channel.close(promise: nil)
                    throw FlowError.tls(TLSStatus.hostNameMismatch)
                }
                return facts
            }
        } catch {
            return channel.eventLoop.makeFailedFuture(FlowError(tls: error, verifyBlock: false))
        }
    }

    /// Adds a server handler in front of everything (at adoption, so early bytes reach it), or
    /// right below `before` (TLS a framer prepended, above the framer).
    static func addServerHandler(
        to channel: Channel, context: NIOSSLContext, settings: FlowTLSConfiguration, before: (any ChannelHandler)? = nil
    ) throws -> NIOSSLServerHandler {
        let handler: NIOSSLServerHandler
        if let verify = settings.verify, settings.peerAuthenticationRequired == true || settings.asksOptionalClientCertificate {
            handler = NIOSSLServerHandler(context: context) { certificates, promise in
                let chain = certificates.compactMap { try? $0.toDERBytes() }
                verify(chain) { trusted in
                    NetworkLog.tls.debug("verify block says \(trusted ? "trusted" : "not trusted") (client certificate)")
                    promise.succeed(trusted ? .certificateVerified : .failed)
                }
            }
        } else {
            handler = NIOSSLServerHandler(context: context)
        }
        try channel.pipeline.syncOperations.addHandler(handler, position: before.map { .before($0) } ?? .first)
        return handler
    }

    /// Waits for the server handshake of an accepted flow.
    static func waitForServerHandshake(_ handler: NIOSSLServerHandler, on channel: Channel) -> EventLoopFuture<TLSSessionFacts> {
        wait(for: handler, on: channel, presented: PresentedChain(), serverName: nil, verifyBlock: false)
    }

    private static func wait(
        for handler: NIOSSLHandler, on channel: Channel, presented: PresentedChain, serverName: String?, verifyBlock: Bool
    ) -> EventLoopFuture<TLSSessionFacts> {
        let promise = channel.eventLoop.makePromise(of: String?.self)
        do {
            try channel.pipeline.syncOperations.addHandler(
                TLSHandshakeWaiter(promise: promise, verifyBlock: verifyBlock) { [weak handler] in
                    try? handler?.peerCertificate?.toDERBytes()
                },
                position: .after(handler))
        } catch {
            promise.fail(error)
        }
        let bound = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        return promise.futureResult.map { negotiated in
            var chain = presented.chain
            if chain.isEmpty, let leaf = bound.value.peerCertificate, let der = try? leaf.toDERBytes() { chain = [der] }
            return TLSSessionFacts(
                negotiatedProtocol: negotiated, version: wireVersion(bound.value.tlsVersion),
                peerCertificates: chain, serverName: serverName)
        }
    }

    /// The chain the peer presented, captured by the verification callback (event loop only).
    final class PresentedChain: @unchecked Sendable {
        var chain: [[UInt8]] = []
    }
}

/// Sits right after the TLS handler while the handshake runs: keeps reads going (the flow reads
/// on demand, so nobody else would) and reports the outcome once.
final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny

    private let promise: EventLoopPromise<String?>
    private let verifyBlock: Bool
    /// The certificate the peer presented (DER), asked for only when a failure needs it
    /// explained (see ``TrustDiagnosis``).
    private let peerLeaf: () -> [UInt8]?
    private var done = false

    init(promise: EventLoopPromise<String?>, verifyBlock: Bool, peerLeaf: @escaping () -> [UInt8]? = { nil }) {
        self.promise = promise
        self.verifyBlock = verifyBlock
        self.peerLeaf = peerLeaf
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { context.read() }
    }

    func channelActive(context: ChannelHandlerContext) {
        context.read()
        context.fireChannelActive()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !done { context.read() }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if !done, let channelEvent = event as? ChannelEvent, channelEvent == .inputClosed {
            // The peer closed in the middle of the handshake (half-closure keeps the channel
            // open, so nothing else would end the wait).
            done = true
            promise.fail(FlowError.tls(TLSStatus.closedAbort))
            context.close(promise: nil)
            return
        }
        if !done, let tls = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = tls {
            done = true
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            promise.succeed(negotiated)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            promise.fail(FlowError(tls: error, verifyBlock: verifyBlock, peerLeaf: peerLeaf))
            context.close(promise: nil)
            return
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            promise.fail(FlowError.tls(TLSStatus.closedAbort))
        }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Removed before the outcome: the pipeline is being torn down. That happens without a
        // channelInactive for us when the channel closed before we were added (a peer that left
        // before an accepted connection was started), and the wait would never end.
        if !done {
            done = true
            promise.fail(FlowError.tls(TLSStatus.closedAbort))
        }
    }
}

extension FlowError {
    /// A handshake failure as the Security framework's status code. `peerLeaf` gives the
    /// certificate the peer presented, for telling an expired certificate from an untrusted
    /// one when the default verification refused it (BoringSSL's error text does not say which).
    init(tls error: any Error, verifyBlock: Bool, peerLeaf: () -> [UInt8]? = { nil }) {
        if let flow = error as? FlowError {
            self = flow
            return
        }
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            self = .tls(TLSStatus.hostNameMismatch)
            return
        }
        let text = String(describing: error).uppercased()
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("CERTIFICATE VERIFY FAILED") {
            if verifyBlock {
                self = .tls(TLSStatus.badCertificate)
            } else if text.contains("EXPIRED") {
                self = .tls(TLSStatus.certificateExpired)
            } else if text.contains("HOSTNAME") || text.contains("HOST NAME") {
                self = .tls(TLSStatus.hostNameMismatch)
            } else {
                switch peerLeaf().map({ TrustDiagnosis.diagnose(leaf: $0) }) {
                case .expired: self = .tls(TLSStatus.certificateExpired)
                case .notYetValid: self = .tls(TLSStatus.certificateNotYetValid)
                case .untrusted, nil: self = .tls(TLSStatus.certificateChainInvalid)
                }
            }
        } else if text.contains("PROTOCOL_VERSION") || text.contains("UNSUPPORTED_PROTOCOL") {
            self = .tls(TLSStatus.peerProtocolVersion)
        } else if text.contains("CERTIFICATE_REQUIRED") || text.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE") {
            self = .tls(TLSStatus.peerCertificateRequired)
        } else if text.contains("ALERT") && text.contains("HANDSHAKE_FAILURE") {
            self = .tls(TLSStatus.peerHandshakeFailure)
        } else if error is NIOSSLError, case .uncleanShutdown = error as! NIOSSLError {
            self = .tls(TLSStatus.closedAbort)
        } else if error is IOError {
            self = .tls(TLSStatus.closedAbort)
        } else {
            self = .tls(TLSStatus.protocolError)
        }
    }
}
