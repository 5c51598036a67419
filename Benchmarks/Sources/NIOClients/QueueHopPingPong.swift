import BenchSupport
import Dispatch
import NIOCore
import NIOPosix

/// The floor of the classic API's design, without any I/O: an event-loop task hands work to a
/// serial `DispatchQueue` (the hop Apple's contract forces: callbacks run on the user's queue),
/// whose block hands the next piece back to the loop (the hop a send from a callback makes
/// today). One operation = one loop → queue → loop round, so half of its cost is the forced hop.
public final class QueueHopPingPong: Sendable {
    private let loop: EventLoop
    private let queue = DispatchQueue(label: "bench.hop")

    public init(group: EventLoopGroup) {
        self.loop = group.next()
    }

    public func start(_ control: RunControl) {
        loop.execute { self.onLoop(control) }
    }

    private func onLoop(_ control: RunControl) {
        queue.async {
            guard control.completed() else { return control.connectionStopped() }
            self.loop.execute { self.onLoop(control) }
        }
    }
}
