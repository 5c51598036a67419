import NIOCore
import NetworkSync

/// The process's QUIC session tickets, by server: a client connection takes the ticket of the
/// server it connects to (each ticket is used once, so two connections cannot be linked by it,
/// and a server's anti-replay never sees 0-RTT data twice) and stores the ticket its session
/// gives. Apple's framework likewise keeps one TLS session cache per process.
///
/// A ticket is offered only to a connection with the same server name, port and application
/// protocols; whatever verifies the server (system trust, a verify block) judges the chain
/// the ticket's first handshake proved, as it would a full handshake's.
package final class QUICSessionCache: Sendable {
    package struct Key: Hashable, Sendable {
        package var server: String
        package var port: Int
        package var applicationProtocols: [String]

        package init(server: String, port: Int, applicationProtocols: [String]) {
            self.server = server
            self.port = port
            self.applicationProtocols = applicationProtocols
        }
    }

    /// Servers remembered at most; the oldest goes first.
    package let capacity: Int
    /// How long a ticket is kept (servers may allow longer; RFC 8446 caps lifetimes at 7 days).
    package let lifetime: TimeAmount
    private let state = Lock(State())

    /// The tickets, each with the order it came in (the oldest server goes first).
    private struct State {
        var entries: [Key: (resumption: QUICResumption, stored: UInt64)] = [:]
        var stored: UInt64 = 0
    }

    package static let shared = QUICSessionCache()

    package init(capacity: Int = 256, lifetime: TimeAmount = .hours(24)) {
        self.capacity = capacity
        self.lifetime = lifetime
    }

    /// The ticket for `key`, taken out of the cache; nil when none is left or it expired.
    package func take(_ key: Key, now: NIODeadline = .now()) -> QUICResumption? {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: key), entry.resumption.expires > now else { return nil }
            return entry.resumption
        }
    }

    /// Keeps `resumption` for `key`, replacing an older ticket of that server.
    package func store(_ resumption: QUICResumption, for key: Key) {
        var resumption = resumption
        resumption.expires = min(resumption.expires, .now() + lifetime)
        state.withLock { state in
            state.stored += 1
            state.entries[key] = (resumption, state.stored)
            guard state.entries.count > capacity, let oldest = state.entries.min(by: { $0.value.stored < $1.value.stored })
            else { return }
            state.entries[oldest.key] = nil
        }
    }

    /// Whether a ticket is kept for `key` now.
    package func hasTicket(for key: Key) -> Bool {
        state.withLock { $0.entries[key] != nil }
    }

    /// Servers with a ticket kept now.
    package var count: Int { state.withLock { $0.entries.count } }

    /// Forgets every ticket.
    package func removeAll() {
        state.withLock { $0.entries.removeAll() }
    }
}
