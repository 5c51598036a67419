import NIOCore

/// The pings the application sent with a pong handler, oldest first. A pong answers the oldest
/// ping with the same payload, and every older one too (RFC 6455 lets a peer answer only the
/// latest of several pings). A pong that matches none is unsolicited and answers nothing.
package struct WebSocketPingTracker<Handler> {
    private var waiting: [(payload: ByteBuffer, handler: Handler)] = []

    package init() {}

    package var count: Int { waiting.count }

    package mutating func pingSent(payload: ByteBuffer, handler: Handler) {
        waiting.append((payload, handler))
    }

    /// The handlers a pong with `payload` answers, oldest first.
    package mutating func pongReceived(payload: ByteBuffer) -> [Handler] {
        guard let index = waiting.firstIndex(where: { $0.payload == payload }) else { return [] }
        let answered = waiting[...index].map(\.handler)
        waiting.removeFirst(index + 1)
        return answered
    }

    /// Every handler still waiting (the connection ended).
    package mutating func takeAll() -> [Handler] {
        defer { waiting = [] }
        return waiting.map(\.handler)
    }
}
