#if canImport(Glibc)
import Glibc
#endif
import CGnuTLS
import NetworkSync

/// A QUIC listener's session tickets (the C binding): the key that seals the tickets its
/// connections issue (random, per listener, so a ticket is good only here and only while the
/// listener lives) and, when the listener accepts 0-RTT, GnuTLS's anti-replay state with its
/// memory (`QUICReplayFilter`). Server connections enable both on their sessions.
package final class QUICServerTickets: @unchecked Sendable {
    // (Immutable after init; GnuTLS reads the key and calls the filter from the listener's loop.)
    private var key = gnutls_datum_t()
    private var antiReplay: gnutls_anti_replay_t?
    private let filter: Lock<QUICReplayFilter>
    /// Early data from clients resuming a session is taken (0-RTT).
    package let acceptsEarlyData: Bool

    /// ClientHellos remembered at most for anti-replay (about 10 s of new connections).
    package static let replayCapacity = 65_536

    package init(acceptsEarlyData: Bool, replayCapacity: Int = QUICServerTickets.replayCapacity) throws(FlowError) {
        self.acceptsEarlyData = acceptsEarlyData
        filter = Lock(QUICReplayFilter(capacity: replayCapacity))
        try GnuTLSCall.check(gnutls_session_ticket_key_generate(&key))
        guard acceptsEarlyData else { return }
        try GnuTLSCall.check(gnutls_anti_replay_init(&antiReplay))
        gnutls_anti_replay_set_ptr(antiReplay, Unmanaged.passUnretained(self).toOpaque())
        gnutls_anti_replay_set_add_function(antiReplay) { owner, expires, key, _ in
            guard let owner, let key else { return GNUTLS_E_DB_ENTRY_EXISTS }
            let tickets = Unmanaged<QUICServerTickets>.fromOpaque(owner).takeUnretainedValue()
            let bytes = Array(UnsafeRawBufferPointer(start: key.pointee.data, count: Int(key.pointee.size)))
            let now = time(nil)
            // A key seen before (or no room to remember it): GnuTLS refuses the early data.
            return tickets.filter.withLock { $0.admit(bytes, expires: Int(expires), now: Int(now)) } ? 0 : GNUTLS_E_DB_ENTRY_EXISTS
        }
    }

    deinit {
        if let antiReplay { gnutls_anti_replay_deinit(antiReplay) }
        if let data = key.data {
            memset(data, 0, Int(key.size))
            // (Allocated by GnuTLS with gnutls_malloc, which is malloc unless replaced.)
            free(data)
        }
    }

    /// Lets `session` (a server's) issue tickets sealed with this listener's key and, when
    /// early data is accepted, take 0-RTT data under anti-replay. QUIC requires a ticket to
    /// allow either no early data or 0xffffffff bytes of it (RFC 9001, 4.6.1).
    func enable(on session: gnutls_session_t?) throws(FlowError) {
        try GnuTLSCall.check(gnutls_session_ticket_enable_server(session, &key))
        guard acceptsEarlyData else { return }
        gnutls_anti_replay_enable(session, antiReplay)
        try GnuTLSCall.check(gnutls_record_set_max_early_data_size(session, 0xffff_ffff))
    }

    /// ClientHellos the anti-replay memory holds now.
    var rememberedHellos: Int { filter.withLock { $0.count } }
}
