#if canImport(Glibc)
import Glibc
#endif
import CGnuTLS
import DequeModule
import Logging
import NIOCore
import NetworkDNS

/// One GnuTLS session (non-blocking) confined to one event loop: DTLS over datagrams, or TLS over
/// a byte stream (the pre-shared-key sessions BoringSSL cannot run). It knows nothing about
/// sockets: ciphertext comes in through `receive` and leaves through the `write` closure, so the
/// same session serves a connected client channel, an accepted TCP child and a DTLS listener's
/// per-peer flow.
final class GnuTLSSession: @unchecked Sendable {
    enum Role: Equatable {
        case client(serverName: String?)
        case server
    }

    /// How the peer ended the session, if it did.
    enum End {
        /// close_notify: an orderly end.
        case closed
        case failed(FlowError)
    }

    enum Phase {
        case idle, handshaking, verifying, established, closed
    }

    let settings: FlowTLSConfiguration
    let role: Role
    /// TLS over a byte stream rather than DTLS over datagrams.
    let stream: Bool
    /// The stream's peer closed its side (a read of nothing then means the end).
    var inputClosed = false
    let eventLoop: EventLoop
    let credentials: GnuTLSCredentials
    var session: gnutls_session_t?
    var phase = Phase.idle
    /// Ciphertext datagrams not yet consumed by GnuTLS. Bounded: a flood only drops datagrams,
    /// as UDP would.
    var inbound = Deque<ByteBuffer>()
    static let inboundLimit = 64
    let write: (ByteBuffer, EventLoopPromise<Void>?) -> Void
    let flush: () -> Void
    /// The completion of the plaintext write in progress, handed to the ciphertext it became.
    var writePromise: EventLoopPromise<Void>?
    var retransmit: Scheduled<Void>?
    /// How long a datagram handshake may take, and when the running one must be over. GnuTLS
    /// checks its own total only when it retransmits (1 s, then 2 s, 4 s... later), so a 1.5 s
    /// timeout ended after 3 s, or 5 s on a busy machine: the retransmission timer stops at
    /// the deadline instead.
    private let handshakeTimeout: TimeAmount
    private var handshakeDeadline: NIODeadline?
    var handshakeCompletion: ((Result<TLSSessionFacts, FlowError>) -> Void)?
    var facts: TLSSessionFacts?

    /// The largest plaintext one record can carry (GnuTLS's default record size).
    static let recordCapacity = 16_384

    /// Datagrams larger than this are refused with EMSGSIZE (the handshake fragments itself).
    static let mtu: UInt32 = 1_400

    /// How long a handshake may take before it fails with ETIMEDOUT (a lost or undecryptable
    /// flight is retransmitted until then; DTLS drops what it cannot decrypt, so a wrong key
    /// ends this way too).
    static let defaultHandshakeTimeout: TimeAmount = .seconds(30)

    init(
        role: Role, settings: FlowTLSConfiguration, eventLoop: EventLoop, stream: Bool = false,
        handshakeTimeout: TimeAmount = GnuTLSSession.defaultHandshakeTimeout,
        write: @escaping (ByteBuffer, EventLoopPromise<Void>?) -> Void, flush: @escaping () -> Void
    ) throws(FlowError) {
        self.role = role
        self.stream = stream
        self.settings = settings
        self.eventLoop = eventLoop
        self.write = write
        self.flush = flush
        self.handshakeTimeout = handshakeTimeout
        credentials = try GnuTLSCredentials.shared(settings, server: role == .server, stream: stream)
        var created: gnutls_session_t?
        let end: Int32 = role == .server ? 1 : 2  // GNUTLS_SERVER, GNUTLS_CLIENT
        let datagram: Int32 = stream ? 0 : GNUTLS_DATAGRAM
        try GnuTLSCall.check(gnutls_init(&created, UInt32(end | datagram | GNUTLS_NONBLOCK)))
        session = created
        try configure(handshakeTimeout: handshakeTimeout)
    }

    deinit {
        retransmit?.cancel()
        if let session { gnutls_deinit(session) }
    }

    func configure(handshakeTimeout: TimeAmount) throws(FlowError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        gnutls_session_set_ptr(session, me)
        gnutls_transport_set_ptr(session, me)
        gnutls_transport_set_push_function(session, gnuTLSPush)
        gnutls_transport_set_pull_function(session, gnuTLSPull)
        gnutls_transport_set_pull_timeout_function(session, gnuTLSPullTimeout)
        try GnuTLSCall.check(gnutls_priority_set_direct(session, credentials.priority, nil))
        if let certificates = credentials.certificates {
            try GnuTLSCall.check(gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(certificates)))
        }
        if let psk = credentials.pskClient {
            try GnuTLSCall.check(gnutls_credentials_set(session, GNUTLS_CRD_PSK, UnsafeMutableRawPointer(psk)))
        }
        if let psk = credentials.pskServer {
            try GnuTLSCall.check(gnutls_credentials_set(session, GNUTLS_CRD_PSK, UnsafeMutableRawPointer(psk)))
        }
        if !stream {
            gnutls_dtls_set_mtu(session, Self.mtu)
            // First retransmission after 1 s (RFC 6347's initial timer).
            gnutls_dtls_set_timeouts(session, 1_000, UInt32(clamping: handshakeTimeout.nanoseconds / 1_000_000))
        }
        if !settings.applicationProtocols.isEmpty {
            try setApplicationProtocols(settings.applicationProtocols)
        }
        switch role {
        case .client(let serverName):
            try GnuTLSSessionQueries.setServerName(serverName, on: session)
        case .server:
            if settings.peerAuthenticationRequired == true {
                gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUIRE)
            } else if settings.asksOptionalClientCertificate {
                gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST)
            }
        }
    }

    func setApplicationProtocols(_ protocols: [String]) throws(FlowError) {
        try GnuTLSSessionQueries.setApplicationProtocols(protocols, on: session)
    }

    /// Continues the sequence numbers a cookie exchange used (a DTLS listener's first reply came
    /// from `DTLSCookies`, not from this session).
    func continueAfterCookie(_ prestate: gnutls_dtls_prestate_st) {
        var state = prestate
        gnutls_dtls_prestate_set(session, &state)
    }

    // MARK: - Handshake

    /// Runs the handshake (and the peer's verification); `completion` is called once on the
    /// event loop.
    func startHandshake(_ completion: @escaping (Result<TLSSessionFacts, FlowError>) -> Void) {
        eventLoop.preconditionInEventLoop()
        guard phase == .idle else {
            completion(.failure(.posix(EALREADY)))
            return
        }
        handshakeCompletion = completion
        phase = .handshaking
        if !stream { handshakeDeadline = .now() + handshakeTimeout }
        continueHandshake()
    }

    func continueHandshake() {
        guard phase == .handshaking else { return }
        retransmit?.cancel()
        retransmit = nil
        var status = gnutls_handshake(session)
        var rounds = 0
        // Warnings (for example a warning alert) are not fatal: go on while there is input.
        while status < 0, status != GNUTLS_E_AGAIN, gnutls_error_is_fatal(status) == 0, rounds < 8, !inbound.isEmpty {
            status = gnutls_handshake(session)
            rounds += 1
        }
        flush()
        if status == 0 {
            phase = .verifying
            verifyPeer()
        } else if stream && (status == GNUTLS_E_AGAIN || gnutls_error_is_fatal(status) == 0) {
            // TCP retransmits by itself: wait for more bytes (the connection timeout bounds it).
            return
        } else if status == GNUTLS_E_AGAIN || gnutls_error_is_fatal(status) == 0 {
            // Nothing to read yet: come back when a datagram arrives or GnuTLS wants to
            // retransmit its last flight.
            var wait = TimeAmount.milliseconds(max(Int64(gnutls_dtls_get_timeout(session)), 1))
            if let handshakeDeadline {
                let left = handshakeDeadline - .now()
                guard left > .zero else {
                    NetworkLog.tls.debug("DTLS handshake timed out")
                    finishHandshake(.failure(.posix(ETIMEDOUT)))
                    return
                }
                wait = min(wait, left)
            }
            retransmit = eventLoop.scheduleTask(in: wait) { [weak self] in
                self?.continueHandshake()
            }
        } else {
            NetworkLog.tls.debug("GnuTLS handshake error \(status)")
            finishHandshake(.failure(GnuTLSErrors.error(forGnuTLSStatus: status, session: session)))
        }
    }

    func finishHandshake(_ result: Result<TLSSessionFacts, FlowError>) {
        retransmit?.cancel()
        retransmit = nil
        switch result {
        case .success(let facts):
            self.facts = facts
            phase = .established
        case .failure:
            phase = .closed
            inbound.removeAll()
        }
        let completion = handshakeCompletion
        handshakeCompletion = nil
        completion?(result)
    }

    // MARK: - Records

    /// Takes one ciphertext datagram (or, with nil, only drains what is queued) and returns the
    /// messages it carried, plus how the peer ended the session if it did. During the handshake
    /// datagrams feed it; before it starts they wait (bounded).
    func receive(_ datagram: ByteBuffer?) -> (messages: [ByteBuffer], end: End?) {
        eventLoop.preconditionInEventLoop()
        // An empty datagram carries no record (and GnuTLS would read it as end of stream).
        if let datagram, datagram.readableBytes > 0 {
            // A stream is never dropped from (reads are on demand, so it stays small).
            if !stream && inbound.count >= Self.inboundLimit { inbound.removeFirst() }
            inbound.append(datagram)
        }
        switch phase {
        case .idle, .verifying:
            return ([], nil)
        case .handshaking:
            continueHandshake()
            if phase == .established { return drain() }
            return ([], nil)
        case .established:
            return drain()
        case .closed:
            inbound.removeAll()
            return ([], nil)
        }
    }

    func drain() -> (messages: [ByteBuffer], end: End?) {
        var messages: [ByteBuffer] = []
        while true {
            var status = 0
            scratch.clear()
            scratch.reserveCapacity(minimumWritableBytes: Self.recordCapacity)
            scratch.withUnsafeMutableWritableBytes { space in
                status = gnutls_record_recv(session, space.baseAddress, space.count)
            }
            if status > 0 {
                // Copied out at its own size: the scratch buffer is reused for the next record.
                scratch.moveWriterIndex(forwardBy: status)
                var message = ByteBufferAllocator().buffer(capacity: status)
                message.writeImmutableBuffer(scratch)
                messages.append(message)
                continue
            }
            if status == 0 {
                phase = .closed
                inbound.removeAll()
                return (messages, .closed)
            }
            let code = Int32(clamping: status)
            if code == GNUTLS_E_AGAIN || code == GNUTLS_E_INTERRUPTED {
                return (messages, nil)
            }
            if gnutls_error_is_fatal(code) == 0 {
                // A damaged or replayed record is dropped silently in DTLS; go on with the rest.
                if inbound.isEmpty { return (messages, nil) }
                continue
            }
            phase = .closed
            inbound.removeAll()
            return (messages, .failed(GnuTLSErrors.error(forGnuTLSStatus: code, session: session)))
        }
    }

    var scratch = ByteBufferAllocator().buffer(capacity: 0)

    /// Encrypts one message into one record (one datagram); on a stream, as many records as it
    /// takes. The promise completes with the write of the last one.
    func send(_ plaintext: ByteBuffer, promise: EventLoopPromise<Void>?) {
        eventLoop.preconditionInEventLoop()
        guard phase == .established, !outputClosed else {
            promise?.fail(phase == .closed || outputClosed ? FlowError.posix(EPIPE) : FlowError.posix(ENOTCONN))
            return
        }
        var remaining = plaintext
        repeat {
            let chunk = stream ? min(remaining.readableBytes, Self.recordCapacity) : remaining.readableBytes
            let last = chunk == remaining.readableBytes
            writePromise = last ? promise : nil
            let status = remaining.withUnsafeReadableBytes { bytes in
                gnutls_record_send(session, bytes.baseAddress, chunk)
            }
            let pending = writePromise
            writePromise = nil
            if status < 0 {
                // Failed records fail the whole message (nothing the peer saw is reported done).
                (pending ?? promise)?.fail(GnuTLSErrors.error(forGnuTLSStatus: Int32(status), session: session))
                return
            }
            remaining.moveReaderIndex(forwardBy: max(status, 0))
            pending?.succeed()
            if status == 0 { break }
        } while remaining.readableBytes > 0
    }

    /// The stream's peer sent its FIN: what is buffered is read, then the session ends (with
    /// close_notify seen, an orderly end; without, a truncation).
    func receivedEndOfStream() -> (messages: [ByteBuffer], end: End?) {
        inputClosed = true
        return receive(nil)
    }

    /// Sends close_notify but goes on reading (a final message on a stream: the peer may still
    /// answer).
    func shutdownOutput() {
        eventLoop.preconditionInEventLoop()
        guard phase == .established, !outputClosed else { return }
        outputClosed = true
        _ = gnutls_bye(session, GNUTLS_SHUT_WR)
        flush()
    }

    var outputClosed = false

    /// Sends close_notify (once) and stops; later datagrams are ignored.
    func close() {
        eventLoop.preconditionInEventLoop()
        retransmit?.cancel()
        retransmit = nil
        if phase == .established && !outputClosed {
            outputClosed = true
            _ = gnutls_bye(session, GNUTLS_SHUT_WR)
            flush()
        }
        let wasHandshaking = phase == .handshaking || phase == .verifying
        phase = .closed
        inbound.removeAll()
        if wasHandshaking { finishHandshake(.failure(.posix(ECANCELED))) }
    }

}
