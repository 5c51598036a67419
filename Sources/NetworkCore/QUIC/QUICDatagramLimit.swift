import Synchronization

/// The largest datagram payload a QUIC connection can send now, kept up to date by its binding
/// on the loop and read from any thread (`NWConnection.maximumDatagramSize`): it grows as path
/// MTU discovery finds larger packets get through.
package final class QUICDatagramLimit: Sendable {
    private let bytes = Atomic<Int>(0)

    /// The limit as last stored (0: the peer takes no datagrams, or not established yet).
    package var current: Int { bytes.load(ordering: .relaxed) }

    func store(_ value: Int) {
        bytes.store(value, ordering: .relaxed)
    }
}
