import NIOCore
import NIOPosix

/// What the whole engine (NetworkCore: flows, establishment, stacks, listeners) shares in the
/// process: the one event-loop group every flow and listener lives on.
package enum Engine {
    /// NIO's process-wide group (one loop per core), shared with any other NIO user in the process.
    package static var group: MultiThreadedEventLoopGroup { MultiThreadedEventLoopGroup.singleton }

    /// The next event loop, round robin.
    package static func nextEventLoop() -> EventLoop { group.next() }
}
