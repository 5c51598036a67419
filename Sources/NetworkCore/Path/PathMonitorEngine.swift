import Logging
import NIOCore
import NIOPosix
import NetworkDNS
import NetworkSystem
import NetworkSync

/// The process's one watch on the network configuration: an rtnetlink socket (links,
/// addresses, routes) read by an event loop. Subscribers get a fresh `PathInputs` right away
/// and again after every burst of changes (one snapshot per loop turn that read any message),
/// on that event loop.
package final class PathMonitorEngine: Sendable {
    package typealias Handler = @Sendable (PathInputs) -> Void

    /// The shared engine.
    package static let shared = PathMonitorEngine()

    package let eventLoop: EventLoop
    private let state = Lock(State())

    private struct State {
        var subscribers: [Int: Handler] = [:]
        var nextToken = 0
        var started = false
        var failure: SystemError?
        /// The newest snapshot, while the rtnetlink watch runs: no change was read since it was
        /// taken, so it is current, and a new subscriber gets it without re-reading the tables
        /// (many connections may begin to wait at once).
        var latest: PathInputs?
        var watching = false
    }

    private init() {
        eventLoop = MultiThreadedEventLoopGroup.singleton.next()
    }

    /// The system's configuration now.
    package static func snapshot(resolvConf: String = "/etc/resolv.conf") -> PathInputs {
        let resolver = ResolvConf(parsing: SysFS.read(resolvConf) ?? "")
        return PathInputs(
            interfaces: InterfaceTable.current(), routes: RouteTable.current(),
            hasNameServers: !resolver.nameservers.isEmpty)
    }

    /// Starts delivering snapshots to `handler` (the first one at once, on the engine's loop);
    /// returns the token for `unsubscribe`.
    @discardableResult
    package func subscribe(_ handler: @escaping Handler) -> Int {
        let (token, start) = state.withLock { state -> (Int, Bool) in
            let token = state.nextToken
            state.nextToken += 1
            state.subscribers[token] = handler
            defer { state.started = true }
            return (token, !state.started)
        }
        if start { startWatching() }
        eventLoop.execute {
            // Still subscribed (an unsubscribe may have come first)?
            guard let handler = self.state.withLock({ $0.subscribers[token] }) else { return }
            handler(self.currentInputs())
        }
        return token
    }

    package func unsubscribe(_ token: Int) {
        state.withLock { _ = $0.subscribers.removeValue(forKey: token) }
    }

    /// The cached snapshot if the watch guarantees it is current, else a fresh one (on the loop).
    private func currentInputs() -> PathInputs {
        if let cached = state.withLock({ $0.watching ? $0.latest : nil }) { return cached }
        let inputs = Self.snapshot()
        state.withLock { if $0.watching { $0.latest = inputs } }
        return inputs
    }

    /// Why watching failed, if it did (the subscribers then only get their first snapshot).
    package var failure: SystemError? { state.withLock { $0.failure } }

    private func startWatching() {
        let fd: Int32
        do {
            fd = try RouteChangeSocket.open()
        } catch {
            NetworkLog.path.debug("cannot watch rtnetlink: \(error); paths will not follow changes")
            state.withLock { $0.failure = error }
            return
        }
        NIOPipeBootstrap(group: eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ChangeReader(engine: self))
                }
            }
            .takingOwnershipOfDescriptor(input: fd)
            .whenComplete { result in
                switch result {
                case .success:
                    self.state.withLock { $0.watching = true }
                case .failure(let error):
                    NetworkLog.path.debug("cannot watch rtnetlink: \(error); paths will not follow changes")
                    self.state.withLock { $0.failure = SystemError(errno: EIO, call: "watching rtnetlink: \(error)") }
                }
            }
    }

    /// The socket closed under us (a read error): a new one, and a fresh snapshot for everyone,
    /// since changes may have been missed meanwhile.
    fileprivate func watchAgain() {
        NetworkLog.path.debug("rtnetlink socket closed; watching again with a new one")
        state.withLock {
            $0.watching = false
            $0.latest = nil
        }
        eventLoop.scheduleTask(in: .milliseconds(100)) {
            self.startWatching()
            self.changed()
        }
    }

    /// A burst of changes was read: every subscriber gets the new configuration.
    fileprivate func changed() {
        let handlers = state.withLock { state -> [Handler] in
            state.latest = nil
            return Array(state.subscribers.values)
        }
        guard !handlers.isEmpty else {
            NetworkLog.path.trace("network configuration changed (nobody watches)")
            return
        }
        let inputs = currentInputs()
        NetworkLog.path.debug(
            "network configuration changed",
            metadata: [
                "interfaces_up": "\(inputs.interfaces.filter(\.isUp).map(\.name).joined(separator: ","))",
                "routes": "\(inputs.routes.count)", "name_servers": "\(inputs.hasNameServers)",
                "subscribers": "\(handlers.count)",
            ])
        for handler in handlers { handler(inputs) }
    }
}

/// Reads rtnetlink datagrams and reports one change per loop turn that read any.
private final class ChangeReader: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private let engine: PathMonitorEngine
    private let pending = Lock(false)

    init(engine: PathMonitorEngine) {
        self.engine = engine
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending.withLock { $0 = true }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard pending.withLock({ value in defer { value = false }; return value }) else { return }
        engine.changed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ENOBUFS: messages were dropped; the tables are re-read anyway.
        engine.changed()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // NIO closes a pipe channel after a read error: watch again with a new socket.
        engine.watchAgain()
    }
}
