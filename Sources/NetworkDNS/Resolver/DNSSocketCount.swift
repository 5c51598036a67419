import NIOCore
import Synchronization

/// How many query sockets (UDP or TCP) a resolver has open right now. A socket counts from its
/// creation until it is closed, so zero means no query is in flight: nothing left to answer,
/// time out or be cancelled. Tests use it to see that cancelled lookups let go of their sockets.
final class DNSSocketCount: Sendable {
    private let count = Atomic<Int>(0)

    /// The sockets open now.
    var current: Int { count.load(ordering: .relaxed) }

    /// Counts `channel` until it closes.
    func track(_ channel: any Channel) {
        count.add(1, ordering: .relaxed)
        channel.closeFuture.whenComplete { _ in self.count.subtract(1, ordering: .relaxed) }
    }
}
