#if canImport(Glibc)
import Glibc
#endif
import CGnuTLS
import CNGTCP2
import DequeModule
import Logging
import NIOCore
import NetworkDNS

/// One QUIC connection: ngtcp2's state and the GnuTLS session that runs TLS 1.3 inside it (the C
/// binding; `QUICDatagramHandler` owns it on a channel). It knows no socket: datagrams come in
/// through `receive(_:from:now:)`, the packets to send are collected by `writePackets(now:)`,
/// and what happened is read from `takeEvents()`. Confined to one thread (its event loop).
package final class QUICConnectionBinding {
    package enum Role: Equatable {
        case client(serverName: String?)
        /// The server side of the connection a client's Initial starts (its connection IDs, and
        /// the Retry it answered, if any).
        case server(QUICInitial)

        var isClient: Bool {
            if case .client = self { return true }
            return false
        }
    }

    package enum Phase: Equatable {
        case handshaking, verifying, established, closed
    }

    let role: Role
    let settings: FlowTLSConfiguration
    package private(set) var phase = Phase.handshaking
    private let credentials: GnuTLSCredentials
    private(set) var connection: OpaquePointer?
    private var session: gnutls_session_t?
    /// How GnuTLS's QUIC glue (ngtcp2_crypto_gnutls) finds the connection from the session.
    private let reference: UnsafeMutablePointer<ngtcp2_crypto_conn_ref>
    private let localAddress: UnsafeMutablePointer<sockaddr_storage>
    private var localLength: socklen_t
    private let remoteAddress: UnsafeMutablePointer<sockaddr_storage>
    private var remoteLength: socklen_t
    /// Both ends are on this machine: packets grow to `loopbackPacketSize` once the handshake is
    /// over (`QUICConnectionBinding+PacketSize`).
    let onLoopback: Bool
    private var events: [QUICEvent] = []
    private var outboxes: [Int64: QUICStreamOutbox] = [:]
    /// Streams with something to hand to ngtcp2, oldest first.
    private var sending = Deque<Int64>()
    /// The packets made, batched for the socket.
    private var output = DatagramBatcher()
    /// QUIC datagrams waiting for a packet (`QUICConnectionBinding+Datagrams`).
    var datagrams = QUICDatagramQueue()
    /// `maxDatagramPayload` for other threads, as of the last `writePackets`.
    let datagramLimit = QUICDatagramLimit()
    /// A datagram came in (a server writes nothing before).
    private var hasReceived = false
    /// A failure a callback found, reported once the ngtcp2 call that ran it returns.
    private var callbackFailure: (error: FlowError, transportCode: UInt64)?
    private let allocator = ByteBufferAllocator()
    /// Client: the session this one resumes (its ticket was used), if any.
    private let resumption: QUICResumption?
    /// Client: the stream opened before the handshake for 0-RTT data (`earlyData`), if any.
    package private(set) var earlyStream: Int64?
    /// Client: the server refused the 0-RTT data; the early stream is opened again after the
    /// read that learned it, and its bytes are sent again.
    private var reopenEarlyStream = false
    /// Server: the listener's tickets (and 0-RTT anti-replay), kept as long as the session.
    private let tickets: QUICServerTickets?
    /// Client: called with each ticket the server issues, to resume a later session with.
    package var onTicket: ((QUICResumption) -> Void)?
    /// Server: told each connection ID this side issues (true) and each the client retired
    /// (false), so that a listener can find the connection by the ID a packet from a new
    /// address carries. The first ID is not told: read it with `connectionIDs()`.
    var onConnectionID: ((_ id: [UInt8], _ issued: Bool) -> Void)?
    /// The length of the connection IDs this side issues; a listener reads a short-header
    /// packet's destination ID with it.
    static let connectionIDLength = 8
    /// The peer's chain as the handshake (or the resumed session) proved it.
    private var peerChain: [[UInt8]] = []
    /// A ticket that came before the server was verified (GnuTLS servers send theirs with
    /// their last handshake flight): kept only once it is.
    private var unverifiedTicket: [UInt8]?

    /// The most packets one `writePackets` call makes before returning (the caller calls again
    /// once they are written, so one connection cannot hold its loop).
    static let packetsPerWrite = 64

    /// `connectionIDs` replaces the random ones of the first Initial (the fuzz target replays
    /// captured server packets, which only decrypt for the IDs they were captured with).
    /// A client resumes `resumption` (a ticket from an earlier session with the same server)
    /// and, with it, sends `earlyData` on its first bidirectional stream as 0-RTT data (after
    /// the handshake if the server refuses it); a server issues tickets with `tickets`.
    package init(
        role: Role, settings: FlowTLSConfiguration, limits: QUICSettings = QUICSettings(),
        local: SocketAddress, remote: SocketAddress, now: UInt64,
        connectionIDs: (destination: [UInt8], source: [UInt8])? = nil,
        resumption: QUICResumption? = nil, earlyData: ByteBuffer? = nil, tickets: QUICServerTickets? = nil
    ) throws(FlowError) {
        self.role = role
        self.settings = settings
        self.resumption = role.isClient ? resumption : nil
        self.tickets = role.isClient ? nil : tickets
        onLoopback = FlowAddress(local).isLoopback && FlowAddress(remote).isLoopback
        credentials = try GnuTLSCredentials.shared(settings, server: !role.isClient, stream: true)
        reference = .allocate(capacity: 1)
        localAddress = .allocate(capacity: 1)
        remoteAddress = .allocate(capacity: 1)
        localLength = Self.store(local, in: localAddress)
        remoteLength = Self.store(remote, in: remoteAddress)
        reference.initialize(to: ngtcp2_crypto_conn_ref(get_conn: { reference in
            guard let owner = reference?.pointee.user_data else { return nil }
            return Unmanaged<QUICConnectionBinding>.fromOpaque(owner).takeUnretainedValue().connection
        }, user_data: Unmanaged.passUnretained(self).toOpaque()))
        try makeSession()
        try makeConnection(limits: limits, now: now, connectionIDs: connectionIDs)
        if let earlyData, let resumption { startEarlyData(earlyData, parameters: resumption.parameters) }
    }

    deinit {
        if let connection { ngtcp2_conn_del(connection) }
        if let session { gnutls_deinit(session) }
        reference.deallocate()
        localAddress.deallocate()
        remoteAddress.deallocate()
    }

    // MARK: - Setup

    private static func store(_ address: SocketAddress, in storage: UnsafeMutablePointer<sockaddr_storage>) -> socklen_t {
        storage.initialize(to: sockaddr_storage())
        return address.withSockAddr { pointer, length in
            UnsafeMutableRawPointer(storage).copyMemory(from: pointer, byteCount: length)
            return socklen_t(length)
        }
    }

    private func makeSession() throws(FlowError) {
        var created: gnutls_session_t?
        var flags = role.isClient
            ? GNUTLS_CLIENT.rawValue | GNUTLS_ENABLE_EARLY_DATA.rawValue | GNUTLS_NO_END_OF_EARLY_DATA.rawValue
            : GNUTLS_SERVER.rawValue | GNUTLS_NO_END_OF_EARLY_DATA.rawValue
        // (A server takes 0-RTT only with anti-replay state, which its listener's tickets hold.)
        if tickets?.acceptsEarlyData == true { flags |= GNUTLS_ENABLE_EARLY_DATA.rawValue }
        try GnuTLSCall.check(gnutls_init(&created, flags))
        session = created
        if role.isClient {
            gnutls_handshake_set_hook_function(
                session, UInt32(GNUTLS_HANDSHAKE_NEW_SESSION_TICKET.rawValue), GNUTLS_HOOK_POST,
                { session, _, _, _, _ in
                    guard let reference = gnutls_session_get_ptr(session)?.assumingMemoryBound(to: ngtcp2_crypto_conn_ref.self),
                        let owner = reference.pointee.user_data
                    else { return 0 }
                    QUICConnectionBinding.owner(owner).ticketArrived()
                    return 0
                })
            if let resumption {
                try GnuTLSCall.withDatum(resumption.ticket) { (datum: inout gnutls_datum_t) throws(FlowError) in
                    try GnuTLSCall.check(gnutls_session_set_data(session, datum.data, Int(datum.size)))
                }
            }
        } else if let tickets {
            // (GnuTLS sends the client two tickets as its handshake ends.)
            try tickets.enable(on: session)
        }
        try GnuTLSCall.check(gnutls_priority_set_direct(session, GnuTLSPriority.quicString(for: settings), nil))
        try Self.checkGlue(
            role.isClient
                ? ngtcp2_crypto_gnutls_configure_client_session(session) : ngtcp2_crypto_gnutls_configure_server_session(session))
        gnutls_session_set_ptr(session, UnsafeMutableRawPointer(reference))
        if let certificates = credentials.certificates {
            try GnuTLSCall.check(gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(certificates)))
        }
        // QUIC requires ALPN: a handshake without an agreed protocol fails.
        try GnuTLSSessionQueries.setApplicationProtocols(settings.applicationProtocols, on: session, mandatory: true)
        try GnuTLSSessionQueries.setServerName(serverName, on: session)
    }

    private static func checkGlue(_ status: Int32) throws(FlowError) {
        if status != 0 { throw FlowError.posix(EPROTO) }
    }

    private func makeConnection(
        limits: QUICSettings, now: UInt64, connectionIDs: (destination: [UInt8], source: [UInt8])?
    ) throws(FlowError) {
        var callbacks = ngtcp2_callbacks()
        if role.isClient {
            callbacks.client_initial = ngtcp2_crypto_client_initial_cb
            callbacks.recv_retry = ngtcp2_crypto_recv_retry_cb
        } else {
            callbacks.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb
        }
        callbacks.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb
        callbacks.encrypt = ngtcp2_crypto_encrypt_cb
        callbacks.decrypt = ngtcp2_crypto_decrypt_cb
        callbacks.hp_mask = ngtcp2_crypto_hp_mask_cb
        callbacks.update_key = ngtcp2_crypto_update_key_cb
        callbacks.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb
        callbacks.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb
        callbacks.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb
        callbacks.version_negotiation = ngtcp2_crypto_version_negotiation_cb
        callbacks.rand = { destination, length, _ in
            _ = gnutls_rnd(GNUTLS_RND_RANDOM, destination, length)
        }
        callbacks.get_new_connection_id = { _, identifier, token, length, owner in
            guard let identifier, let token,
                QUICConnectionBinding.randomize(&identifier.pointee.data, count: length),
                gnutls_rnd(GNUTLS_RND_RANDOM, token, Int(NGTCP2_STATELESS_RESET_TOKENLEN)) == 0
            else { return NGTCP2_ERR_CALLBACK_FAILURE }
            identifier.pointee.datalen = length
            let binding = QUICConnectionBinding.owner(owner)
            binding.onConnectionID?(QUICConnectionBinding.bytes(of: identifier.pointee), true)
            return 0
        }
        callbacks.remove_connection_id = { _, identifier, owner in
            guard let identifier else { return 0 }
            QUICConnectionBinding.owner(owner).onConnectionID?(QUICConnectionBinding.bytes(of: identifier.pointee), false)
            return 0
        }
        callbacks.handshake_completed = { _, owner in
            QUICConnectionBinding.owner(owner).handshakeCompleted()
        }
        callbacks.handshake_confirmed = { _, owner in
            QUICConnectionBinding.owner(owner).handshakeConfirmed = true
            return 0
        }
        callbacks.recv_stream_data = { _, flags, stream, _, data, length, owner, _ in
            QUICConnectionBinding.owner(owner).received(
                stream: stream, data: data, length: length, isFinal: flags & UInt32(NGTCP2_STREAM_DATA_FLAG_FIN) != 0)
            return 0
        }
        callbacks.recv_datagram = { _, _, data, length, owner in
            let binding = QUICConnectionBinding.owner(owner)
            var bytes = binding.allocator.buffer(capacity: length)
            if let data, length > 0 { bytes.writeBytes(UnsafeRawBufferPointer(start: data, count: length)) }
            binding.events.append(.datagram(bytes))
            return 0
        }
        callbacks.acked_stream_data_offset = { _, stream, offset, length, owner, _ in
            QUICConnectionBinding.owner(owner).outboxes[stream]?.acknowledged(offset: offset, length: length)
            return 0
        }
        callbacks.stream_open = { _, stream, owner in
            QUICConnectionBinding.owner(owner).events.append(.streamOpened(id: stream))
            return 0
        }
        callbacks.stream_reset = { _, stream, _, code, owner, _ in
            QUICConnectionBinding.owner(owner).events.append(.streamReset(id: stream, applicationError: code))
            return 0
        }
        callbacks.stream_close = { connection, flags, stream, code, owner, _ in
            let binding = QUICConnectionBinding.owner(owner)
            binding.outboxes[stream] = nil
            if binding.isPeerStream(stream) {
                // The peer may open another in its place: the limit bounds streams at a time,
                // not in all (ngtcp2 leaves this to the application).
                if stream & 0x2 == 0 {
                    ngtcp2_conn_extend_max_streams_bidi(connection, 1)
                } else {
                    ngtcp2_conn_extend_max_streams_uni(connection, 1)
                }
            }
            let hasCode = flags & UInt32(NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET) != 0
            binding.events.append(.streamClosed(id: stream, applicationError: hasCode ? code : nil))
            return 0
        }
        callbacks.extend_max_local_streams_bidi = { _, _, owner in
            QUICConnectionBinding.owner(owner).events.append(.streamsAvailable(bidirectional: true))
            return 0
        }
        callbacks.extend_max_local_streams_uni = { _, _, owner in
            QUICConnectionBinding.owner(owner).events.append(.streamsAvailable(bidirectional: false))
            return 0
        }

        var destination = ngtcp2_cid(), source = ngtcp2_cid()
        destination.datalen = Int(NGTCP2_MIN_INITIAL_DCIDLEN)
        source.datalen = Self.connectionIDLength
        var originalDestination = ngtcp2_cid()
        var retrySource: ngtcp2_cid?
        if case .server(let initial) = role {
            // Packets go to the client's ID; the original one goes back in the transport
            // parameters, so the client knows no one tampered with its first Initial (and the
            // Retry's, so it knows the Retry came from this server).
            guard Self.copy(initial.clientSource, into: &destination), Self.copy(initial.originalDestination, into: &originalDestination),
                Self.randomize(&source.data, count: source.datalen)
            else { throw FlowError.posix(EINVAL) }
            if let retry = initial.retrySource {
                var identifier = ngtcp2_cid()
                guard Self.copy(retry, into: &identifier) else { throw FlowError.posix(EINVAL) }
                retrySource = identifier
            }
        } else if let connectionIDs {
            guard Self.copy(connectionIDs.destination, into: &destination), Self.copy(connectionIDs.source, into: &source),
                destination.datalen >= Int(NGTCP2_MIN_INITIAL_DCIDLEN)
            else { throw FlowError.posix(EINVAL) }
        } else {
            guard Self.randomize(&destination.data, count: destination.datalen),
                Self.randomize(&source.data, count: source.datalen)
            else { throw FlowError.posix(EIO) }
        }

        var settings = ngtcp2_settings()
        cngtcp2_settings_default(&settings)
        settings.initial_ts = now
        settings.handshake_timeout = UInt64(max(0, limits.handshakeTimeout.nanoseconds))
        if limits.maxUDPPayloadSize >= 1200 { settings.max_tx_udp_payload_size = limits.maxUDPPayloadSize }
        if onLoopback { Self.sizeForLoopback(&settings, requested: limits.maxUDPPayloadSize) }
        var parameters = ngtcp2_transport_params()
        cngtcp2_transport_params_default(&parameters)
        parameters.initial_max_data = limits.maxData
        parameters.initial_max_stream_data_bidi_local = limits.maxStreamDataBidirectionalLocal
        parameters.initial_max_stream_data_bidi_remote = limits.maxStreamDataBidirectionalRemote
        parameters.initial_max_stream_data_uni = limits.maxStreamDataUnidirectional
        parameters.initial_max_streams_bidi = limits.maxBidirectionalStreams
        parameters.initial_max_streams_uni = limits.maxUnidirectionalStreams
        parameters.max_idle_timeout = UInt64(max(0, limits.idleTimeout.nanoseconds))
        parameters.max_datagram_frame_size = limits.maxDatagramFrameSize

        var path = currentPath()
        var created: OpaquePointer?
        let owner = Unmanaged.passUnretained(self).toOpaque()
        let status: Int32
        if role.isClient {
            status = cngtcp2_conn_client_new(
                &created, &destination, &source, &path, UInt32(NGTCP2_PROTO_VER_V1), &callbacks, &settings, &parameters, owner)
        } else {
            parameters.original_dcid = originalDestination
            if let retrySource {
                parameters.retry_scid = retrySource
                parameters.retry_scid_present = 1
            }
            // The Retry token proved the client's address: no anti-amplification limit.
            status = retryToken.withUnsafeBufferPointer { token in
                if token.count > 0 { settings.token = ngtcp2_vec(base: UnsafeMutablePointer(mutating: token.baseAddress), len: token.count) }
                return cngtcp2_conn_server_new(
                    &created, &destination, &source, &path, UInt32(NGTCP2_PROTO_VER_V1), &callbacks, &settings, &parameters, owner)
            }
        }
        guard status == 0, let created else { throw QUICErrors.local(status) }
        connection = created
        ngtcp2_conn_set_tls_native_handle(created, UnsafeMutableRawPointer(session))
    }

    /// The Retry token of a server connection's client (empty: none).
    private var retryToken: [UInt8] {
        guard case .server(let initial) = role else { return [] }
        return initial.token ?? []
    }

    private static func owner(_ pointer: UnsafeMutableRawPointer?) -> QUICConnectionBinding {
        // Every callback is registered with this binding as its user data.
        Unmanaged<QUICConnectionBinding>.fromOpaque(pointer!).takeUnretainedValue()
    }

    private static func randomize<T>(_ storage: inout T, count: Int) -> Bool {
        withUnsafeMutableBytes(of: &storage) { bytes in
            count <= bytes.count && gnutls_rnd(GNUTLS_RND_RANDOM, bytes.baseAddress, count) == 0
        }
    }

    private static func copy(_ bytes: [UInt8], into identifier: inout ngtcp2_cid) -> Bool {
        guard bytes.count <= Int(NGTCP2_MAX_CIDLEN) else { return false }
        withUnsafeMutableBytes(of: &identifier.data) { $0.copyBytes(from: bytes) }
        identifier.datalen = bytes.count
        return true
    }

    /// Client: the server confirmed the handshake (HANDSHAKE_DONE), so the connection may move
    /// to another path.
    private(set) var handshakeConfirmed = false

    /// Client: whether the connection may move to a new local address now: the handshake is
    /// confirmed and the server did not forbid it (`disable_active_migration`).
    var canMigrate: Bool {
        guard role.isClient, handshakeConfirmed, let connection,
            let remote = ngtcp2_conn_get_remote_transport_params(connection)?.pointee
        else { return false }
        return remote.disable_active_migration == 0
    }

    /// Client: moves the connection to `local` (the socket's new address) at once; ngtcp2
    /// validates the new path meanwhile. Packets are then read and written on that path. Returns
    /// ngtcp2's refusal (see `canMigrate`; `NGTCP2_ERR_CONN_ID_BLOCKED` when the server left no
    /// spare connection ID), 0 on success.
    func migrate(to local: SocketAddress, now: UInt64) -> Int32 {
        guard let connection else { return NGTCP2_ERR_INVALID_STATE }
        let previous = (localAddress.pointee, localLength)
        localLength = Self.store(local, in: localAddress)
        var path = currentPath()
        let status = ngtcp2_conn_initiate_immediate_migration(connection, &path, now)
        if status != 0 { (localAddress.pointee, localLength) = previous }
        return status
    }

    /// The connection IDs this side has issued and not seen retired.
    func connectionIDs() -> [[UInt8]] {
        guard let connection else { return [] }
        var identifiers = [ngtcp2_cid](repeating: ngtcp2_cid(), count: ngtcp2_conn_get_num_scid(connection))
        let count = ngtcp2_conn_get_scid(connection, &identifiers)
        return identifiers.prefix(count).map(Self.bytes)
    }

    private static func bytes(of identifier: ngtcp2_cid) -> [UInt8] {
        withUnsafeBytes(of: identifier.data) { Array($0.prefix(min(identifier.datalen, $0.count))) }
    }

    /// The peer's address on the connection's current path, as ngtcp2 has it: after a packet
    /// from a new address that it took as the client's move (or a NAT rebinding), that address.
    var currentRemote: SocketAddress? {
        guard let connection, let path = ngtcp2_conn_get_path(connection)?.pointee,
            let address = path.remote.addr, path.remote.addrlen <= MemoryLayout<sockaddr_storage>.size
        else { return nil }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(path.remote.addrlen))) }
        return SocketAddress(storage: storage)
    }

    private func currentPath() -> ngtcp2_path {
        ngtcp2_path(
            local: ngtcp2_addr(addr: UnsafeMutableRawPointer(localAddress).assumingMemoryBound(to: sockaddr.self), addrlen: localLength),
            remote: ngtcp2_addr(addr: UnsafeMutableRawPointer(remoteAddress).assumingMemoryBound(to: sockaddr.self), addrlen: remoteLength),
            user_data: nil)
    }

    // MARK: - Events from ngtcp2

    private func handshakeCompleted() -> Int32 {
        if earlyStream != nil, gnutls_session_get_flags(session) & GNUTLS_SFLAGS_EARLY_DATA.rawValue == 0, let connection {
            // The server refused the 0-RTT data (or the ticket allowed none): ngtcp2 forgets the
            // early streams, and the bytes go again on a new one (`reopenEarlyStream`).
            NetworkLog.quic.debug("early data refused by the server; sent again after the handshake")
            guard ngtcp2_conn_early_data_rejected(connection) == 0 else { return NGTCP2_ERR_CALLBACK_FAILURE }
            reopenEarlyStream = true
        }
        var chain = GnuTLSSessionQueries.peerCertificates(session)
        if chain.isEmpty, gnutls_session_is_resumed(session) != 0, let resumption {
            // A resumed session shows no certificate: the one its first handshake proved is
            // judged as this connection's settings judge any.
            chain = resumption.chain
        }
        switch GnuTLSSessionQueries.checkPeer(
            session, chain: chain, settings: settings, isClient: role.isClient, serverName: serverName) {
        case .trusted:
            established(chain)
        case .askVerifyBlock:
            phase = .verifying
            events.append(.verificationNeeded(chain: chain))
        case .refused(let status, let detail):
            NetworkLog.quic.debug("peer certificate refused: \(detail)")
            callbackFailure = (.tls(status), QUICErrors.badCertificate)
            return NGTCP2_ERR_CALLBACK_FAILURE
        }
        return 0
    }

    /// The name the peer's certificate must carry (the client's server name).
    private var serverName: String? {
        guard case .client(let name) = role else { return nil }
        return name
    }

    private func established(_ chain: [[UInt8]]) {
        phase = .established
        peerChain = chain
        var facts = GnuTLSSessionQueries.facts(session, chain: chain, serverName: serverName)
        facts.resumed = gnutls_session_is_resumed(session) != 0
        facts.earlyDataAccepted = gnutls_session_get_flags(session) & GNUTLS_SFLAGS_EARLY_DATA.rawValue != 0
        events.append(.established(facts))
        if let ticket = unverifiedTicket {
            unverifiedTicket = nil
            keep(ticket)
        }
    }

    /// The server issued a ticket (client; GnuTLS's hook, after the handshake): kept with what
    /// 0-RTT data needs, through `onTicket`.
    private func ticketArrived() {
        guard onTicket != nil, phase != .closed else { return }
        var data = gnutls_datum_t()
        guard gnutls_session_get_data2(session, &data) == 0, let bytes = data.data else { return }
        let ticket = Array(UnsafeBufferPointer(start: bytes, count: Int(data.size)))
        // (Allocated by GnuTLS with gnutls_malloc, which is malloc unless replaced.)
        free(bytes)
        if phase == .established { keep(ticket) } else { unverifiedTicket = ticket }
    }

    private func keep(_ ticket: [UInt8]) {
        guard let onTicket, let connection, let remote = ngtcp2_conn_get_remote_transport_params(connection)?.pointee else { return }
        // A server states a lifetime of at most 7 days (RFC 8446, 4.6.1); the cache keeps less.
        onTicket(QUICResumption(ticket: ticket, parameters: .init(remote), chain: peerChain, expires: .now() + .hours(24 * 7)))
    }

    /// Opens the first bidirectional stream before the handshake, with the server's remembered
    /// limits, and queues `bytes` on it: they leave as 0-RTT data once the resumed session's
    /// early keys exist (RFC 9001, 4.6), or after the handshake when the ticket allows none.
    private func startEarlyData(_ bytes: ByteBuffer, parameters: QUICResumption.Parameters) {
        guard let connection else { return }
        var remote = parameters.transportParameters
        cngtcp2_conn_set_early_remote_transport_params(connection, &remote)
        var stream: Int64 = -1
        guard ngtcp2_conn_open_bidi_stream(connection, &stream, nil) == 0 else { return }
        outboxes[stream] = QUICStreamOutbox()
        guard send(bytes, on: stream, fin: false) else { return }
        earlyStream = stream
    }

    /// After a refusal of 0-RTT data: the early stream again, from its first byte.
    private func reopenRefusedEarlyStream(now: UInt64) {
        reopenEarlyStream = false
        guard let connection, let old = earlyStream, var outbox = outboxes.removeValue(forKey: old) else { return }
        dropFromSending(old)
        var stream: Int64 = -1
        guard ngtcp2_conn_open_bidi_stream(connection, &stream, nil) == 0 else {
            fail(.posix(EPROTO), transportCode: UInt64(NGTCP2_INTERNAL_ERROR), now: now)
            return
        }
        outbox.rewind()
        outboxes[stream] = outbox
        earlyStream = stream
        if outbox.hasUnsent { sending.append(stream) }
    }

    /// The settings' verify block answered (`.verificationNeeded`).
    func verified(_ trusted: Bool, now: UInt64) {
        guard phase == .verifying else { return }
        if trusted {
            established(GnuTLSSessionQueries.peerCertificates(session))
        } else {
            NetworkLog.quic.debug("verify block refused the peer")
            fail(.tls(TLSStatus.badCertificate), transportCode: QUICErrors.badCertificate, now: now)
        }
    }

    private func received(stream: Int64, data: UnsafePointer<UInt8>?, length: Int, isFinal: Bool) {
        // The stream's data of a read burst becomes one event: one buffer, and one trip up the
        // stream's pipeline, rather than one per packet.
        if case .streamData(stream, var bytes, false)? = events.last {
            events.removeLast()
            // (Unique now, so it grows in place.)
            if let data, length > 0 { bytes.writeBytes(UnsafeRawBufferPointer(start: data, count: length)) }
            events.append(.streamData(id: stream, bytes: bytes, isFinal: isFinal))
            return
        }
        var bytes = allocator.buffer(capacity: length)
        if let data, length > 0 { bytes.writeBytes(UnsafeRawBufferPointer(start: data, count: length)) }
        events.append(.streamData(id: stream, bytes: bytes, isFinal: isFinal))
    }

    /// Everything that happened since the last call, in order.
    package func takeEvents() -> [QUICEvent] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    // MARK: - Input

    /// Hands a datagram from `source` to ngtcp2. Garbage is dropped by ngtcp2 itself; a
    /// datagram that ends the connection (the peer closed it, or broke the protocol) shows as
    /// `.closed`.
    package func receive(_ datagram: ByteBuffer, from source: SocketAddress, ecn: UInt8 = 0, now: UInt64) {
        guard let connection, phase != .closed else { return }
        hasReceived = true
        remoteLength = Self.store(source, in: remoteAddress)
        var path = currentPath()
        let status = datagram.withUnsafeReadableBytes { bytes in
            cngtcp2_conn_read_pkt(connection, &path, ecn, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, now)
        }
        if reopenEarlyStream { reopenRefusedEarlyStream(now: now) }
        guard status != 0 else { return }
        if status == NGTCP2_ERR_DRAINING {
            var error = ngtcp2_connection_close_error()
            ngtcp2_conn_get_connection_close_error(connection, &error)
            finish(QUICErrors.peerClosed(error))
            return
        }
        if status == NGTCP2_ERR_DROP_CONN {
            finish(.posix(ECONNABORTED))
            return
        }
        if let failure = callbackFailure {
            callbackFailure = nil
            fail(failure.error, transportCode: failure.transportCode, now: now)
            return
        }
        let alert = ngtcp2_conn_get_tls_alert(connection)
        NetworkLog.quic.debug("datagram ends the connection: ngtcp2 error \(status), TLS alert \(alert)")
        fail(QUICErrors.local(status, alert: alert), liberr: status, now: now)
    }

    // MARK: - Streams

    /// Opens a stream of this side; nil while the peer's stream limit is reached (wait for
    /// `.streamsAvailable`).
    func openStream(bidirectional: Bool = true) -> Int64? {
        guard let connection, phase == .established else { return nil }
        var stream: Int64 = -1
        let status = bidirectional
            ? ngtcp2_conn_open_bidi_stream(connection, &stream, nil)
            : ngtcp2_conn_open_uni_stream(connection, &stream, nil)
        guard status == 0 else { return nil }
        outboxes[stream] = QUICStreamOutbox()
        return stream
    }

    /// Queues `bytes` on `stream`, and its end with `fin`. False when the stream cannot send
    /// (unknown, gone, or already ended).
    func send(_ bytes: ByteBuffer, on stream: Int64, fin: Bool) -> Bool {
        guard phase != .closed else { return false }
        if outboxes[stream] == nil, isPeerStream(stream), stream & 0x2 == 0 {
            // A bidirectional stream the peer opened: this side answers on it.
            outboxes[stream] = QUICStreamOutbox()
        }
        guard outboxes[stream]?.append(bytes, fin: fin) == true else { return false }
        if !sending.contains(stream) { sending.append(stream) }
        return true
    }

    private func isPeerStream(_ stream: Int64) -> Bool {
        // Bit 0 of a stream id says who opened it: 0 the client, 1 the server.
        stream & 0x1 == (role.isClient ? 1 : 0)
    }

    /// Whether everything queued on `stream` reached the peer: its bytes acknowledged and its
    /// end (if queued) sent; true once the stream is gone.
    func isDelivered(_ stream: Int64) -> Bool {
        guard let outbox = outboxes[stream] else { return true }
        return outbox.heldBytes == 0 && !outbox.hasUnsent
    }

    /// How far into `stream` ngtcp2 has taken the queued bytes (everything, once the stream is
    /// gone).
    func sentOffset(on stream: Int64) -> UInt64 {
        outboxes[stream]?.sentOffset ?? .max
    }

    /// The owner took `count` received bytes of `stream`: the peer may send that much more.
    func consumed(_ count: Int, on stream: Int64) {
        guard let connection, count > 0 else { return }
        _ = ngtcp2_conn_extend_max_stream_offset(connection, stream, UInt64(count))
        ngtcp2_conn_extend_max_offset(connection, UInt64(count))
    }

    /// Resets `stream` both ways with an application error code.
    func reset(_ stream: Int64, applicationError: UInt64) {
        guard let connection else { return }
        outboxes[stream]?.discard()
        _ = ngtcp2_conn_shutdown_stream(connection, stream, applicationError)
    }

    /// The connection's transport parameters as they stand, for the QUIC metadata of `stream`.
    func facts(stream: Int64?) -> QUICConnectionFacts? {
        guard let connection, let remote = ngtcp2_conn_get_remote_transport_params(connection)?.pointee,
            let local = ngtcp2_conn_get_local_transport_params(connection)?.pointee
        else { return nil }
        return QUICConnectionFacts(
            stream: stream, remoteIdleTimeout: Int(clamping: remote.max_idle_timeout / 1_000_000),
            remoteMaxStreams: (Int(clamping: remote.initial_max_streams_bidi), Int(clamping: remote.initial_max_streams_uni)),
            localMaxStreams: (Int(clamping: local.initial_max_streams_bidi), Int(clamping: local.initial_max_streams_uni)),
            maxDatagramFrameSize: Int(clamping: remote.max_datagram_frame_size), datagramLimit: datagramLimit)
    }

    /// Sends PING frames after `interval` nanoseconds without traffic (nil: never), so an idle
    /// connection stays alive (and NAT bindings open).
    func setKeepAlive(_ interval: UInt64?) {
        guard let connection else { return }
        ngtcp2_conn_set_keep_alive_timeout(connection, interval ?? UInt64.max)
    }

    /// Allows the peer `count` more streams of a kind at a time (the limit only grows).
    func allowMoreStreams(bidirectional: Int, unidirectional: Int) {
        guard let connection else { return }
        if bidirectional > 0 { ngtcp2_conn_extend_max_streams_bidi(connection, bidirectional) }
        if unidirectional > 0 { ngtcp2_conn_extend_max_streams_uni(connection, unidirectional) }
    }

    /// Asks the peer to stop sending on `stream` (STOP_SENDING with an application error code);
    /// what still arrives is dropped.
    func stopReading(_ stream: Int64, applicationError: UInt64) {
        guard let connection else { return }
        _ = ngtcp2_conn_shutdown_stream_read(connection, stream, applicationError)
    }

    // MARK: - Output

    /// Makes the packets ngtcp2 has to send now (stream data, acknowledgements, handshake,
    /// retransmissions), at most `packetsPerWrite`; take them with `takePackets()`. True when
    /// it stopped at that limit with more to write.
    @discardableResult
    package func writePackets(now: UInt64) -> Bool {
        guard let connection, phase != .closed else { return false }
        // A server has nothing to say before the client's first Initial gave it its keys (and
        // with a Retry token ngtcp2 would try, and assert).
        guard role.isClient || hasReceived else { return false }
        let size = packetBufferSize
        var blocked: Set<Int64> = []
        var made = 0
        while made < Self.packetsPerWrite {
            // Datagrams first: they are small and late ones are worth little.
            if let datagram = datagrams.next {
                var accepted: Int32 = 0
                let written = output.write(size: size) { base, ecn in
                    writeDatagram(datagram, into: base, size: size, ecn: &ecn, accepted: &accepted, now: now)
                }
                if written < 0 {
                    guard [NGTCP2_ERR_INVALID_STATE, NGTCP2_ERR_INVALID_ARGUMENT].contains(Int32(written)) else {
                        fail(QUICErrors.local(Int32(written)), liberr: Int32(written), now: now)
                        return false
                    }
                    // The peer's limits refuse it (checked when queued, so only if they shrank).
                    datagrams.settleNext(.posix(EMSGSIZE))
                    continue
                }
                if accepted != 0 { datagrams.settleNext(nil) }
                // Nothing written: congestion control holds everything back for now.
                if written == 0 { break }
                made += 1
                continue
            }
            let stream = sending.first { !blocked.contains($0) }
            var accepted = -1
            var sentFin = false
            // The packet's length, or a negative ngtcp2 error.
            let written = output.write(size: size) { base, ecn in
                writeStream(stream, into: base, size: size, ecn: &ecn, accepted: &accepted, sentFin: &sentFin, now: now)
            }
            if written < 0 {
                if let stream, [NGTCP2_ERR_STREAM_DATA_BLOCKED, NGTCP2_ERR_STREAM_SHUT_WR, NGTCP2_ERR_STREAM_NOT_FOUND].contains(Int32(written)) {
                    blocked.insert(stream)
                    if Int32(written) != NGTCP2_ERR_STREAM_DATA_BLOCKED { dropFromSending(stream) }
                    continue
                }
                fail(QUICErrors.local(Int32(written)), liberr: Int32(written), now: now)
                return false
            }
            if let stream, accepted >= 0 {
                outboxes[stream]?.taken(accepted, fin: sentFin)
                if outboxes[stream]?.hasUnsent != true { dropFromSending(stream) }
            }
            if written == 0 { break }
            made += 1
        }
        ngtcp2_conn_update_pkt_tx_time(connection, now)
        datagramLimit.store(maxDatagramPayload)
        return made == Self.packetsPerWrite
    }

    /// One packet into `base`: stream data from `stream` (or only what ngtcp2 itself has to
    /// send when nil); `accepted` is how many of the stream's bytes it took.
    private func writeStream(
        _ stream: Int64?, into base: UnsafeMutablePointer<UInt8>, size: Int, ecn: inout UInt8, accepted: inout Int,
        sentFin: inout Bool, now: UInt64
    ) -> Int {
        guard let connection else { return 0 }
        guard let stream, let outbox = outboxes[stream] else {
            return cngtcp2_conn_writev_stream(connection, &ecn, base, size, &accepted, 0, -1, nil, 0, now)
        }
        return outbox.withUnsent(limit: 16) { pieces, includesFin in
            sentFin = includesFin
            let flags = includesFin ? UInt32(NGTCP2_WRITE_STREAM_FLAG_FIN) : 0
            return withUnsafeTemporaryAllocation(of: ngtcp2_vec.self, capacity: max(1, pieces.count)) { vectors in
                for (index, piece) in pieces.enumerated() {
                    vectors.initializeElement(
                        at: index,
                        to: ngtcp2_vec(base: UnsafeMutablePointer(mutating: piece.bindMemory(to: UInt8.self).baseAddress), len: piece.count))
                }
                return cngtcp2_conn_writev_stream(
                    connection, &ecn, base, size, &accepted, flags, stream, vectors.baseAddress, pieces.count, now)
            }
        }
    }

    private func dropFromSending(_ stream: Int64) {
        if let index = sending.firstIndex(of: stream) { sending.remove(at: index) }
    }

    /// The packets made since the last call, in order, batched for the socket.
    func takeBatches() -> [DatagramBatch] {
        output.take()
    }

    /// The packets made since the last call, in order, one buffer each.
    package func takePackets() -> [ByteBuffer] {
        output.takePackets()
    }

    /// Whether packets of one size leave in batches the kernel segments (`UDP_SEGMENT`).
    var segmentsPackets: Bool {
        get { output.segments }
        set { output.segments = newValue }
    }

    // MARK: - Timers and the end

    /// When `handleExpiry(now:)` must run next (ngtcp2's clock, nanoseconds); nil when never.
    package var expiry: UInt64? {
        guard let connection, phase != .closed else { return nil }
        let next = ngtcp2_conn_get_expiry(connection)
        return next == UInt64.max ? nil : next
    }

    /// Runs ngtcp2's timers (loss detection, acknowledgement delay, idle and handshake
    /// timeouts), then makes the packets they call for.
    package func handleExpiry(now: UInt64) {
        guard let connection, phase != .closed else { return }
        let status = ngtcp2_conn_handle_expiry(connection, now)
        if status == NGTCP2_ERR_IDLE_CLOSE || status == NGTCP2_ERR_HANDSHAKE_TIMEOUT {
            // Closed silently, as QUIC's idle timeout does (the peer times out too).
            finish(.posix(ETIMEDOUT))
            return
        }
        if status != 0 {
            fail(QUICErrors.local(status), liberr: status, now: now)
            return
        }
        writePackets(now: now)
    }

    /// Closes the connection: CONNECTION_CLOSE with `applicationError` (0: no error) is the last
    /// packet (`takePackets()`), and `.closed(nil)` the last event.
    func close(applicationError: UInt64 = 0, reason: String? = nil, now: UInt64) {
        guard phase != .closed else { return }
        var error = ngtcp2_connection_close_error()
        ngtcp2_connection_close_error_default(&error)
        // ngtcp2 keeps the pointer until the close is written, below.
        var phrase = Array((reason ?? "").utf8.prefix(256))
        phrase.withUnsafeMutableBufferPointer { bytes in
            if applicationError != 0 || phase == .established {
                ngtcp2_connection_close_error_set_application_error(&error, applicationError, bytes.baseAddress, bytes.count)
            }
            writeClose(error, now: now)
        }
        finish(nil)
    }

    /// Fails the connection with `error`, telling the peer `transportCode` (or ngtcp2's code
    /// for `liberr`).
    private func fail(_ error: FlowError, transportCode: UInt64? = nil, liberr: Int32? = nil, now: UInt64) {
        guard phase != .closed else { return }
        var close = ngtcp2_connection_close_error()
        ngtcp2_connection_close_error_default(&close)
        if let transportCode {
            ngtcp2_connection_close_error_set_transport_error(&close, transportCode, nil, 0)
        } else if let liberr {
            ngtcp2_connection_close_error_set_transport_error_liberr(&close, liberr, nil, 0)
        }
        writeClose(close, now: now)
        finish(error)
    }

    private func writeClose(_ error: ngtcp2_connection_close_error, now: UInt64) {
        guard let connection else { return }
        var error = error
        let size = packetBufferSize
        _ = output.write(size: size) { base, ecn in
            max(0, cngtcp2_conn_write_connection_close(connection, &ecn, base, size, &error, now))
        }
    }

    private func finish(_ error: FlowError?) {
        guard phase != .closed else { return }
        phase = .closed
        for stream in outboxes.keys { outboxes[stream]?.discard() }
        sending.removeAll()
        // (The owner fails what it still waits for when it sees `.closed`.)
        datagrams.discard()
        events.append(.closed(error))
    }
}
