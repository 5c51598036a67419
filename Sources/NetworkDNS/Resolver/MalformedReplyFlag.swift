import Synchronization

/// Set when the server's reply to a UDP query could not be decoded. The reply is dropped (the
/// real answer may still come), but if none does, the timeout reports `malformedReply`. Set on
/// the channel's event loop, read by its timer: an atomic, since the two share no lock.
final class MalformedReplyFlag: Sendable {
    private let value = Atomic<Bool>(false)

    /// Whether a malformed reply came.
    var isSet: Bool { value.load(ordering: .relaxed) }

    /// Records a malformed reply.
    func set() { value.store(true, ordering: .relaxed) }
}
