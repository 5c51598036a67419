#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkSystem

/// With TCP Fast Open the kernel reports a connect as done at once and sends the SYN with the
/// first write; the handshake really ends when the socket reaches ESTABLISHED. Watching for
/// that keeps "connected" meaning what Happy Eyeballs and `ready` need.
enum FastOpenHandshake {
    /// tcp_states.h
    private static let synSent: UInt8 = 2
    private static let closed: UInt8 = 7

    /// Completes once `channel`'s socket is ESTABLISHED, fails when the handshake failed.
    static func established(_ channel: Channel) -> EventLoopFuture<Void> {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        poll(channel, promise: promise, delay: .microseconds(100))
        return promise.futureResult
    }

    private static func poll(_ channel: Channel, promise: EventLoopPromise<Void>, delay: TimeAmount) {
        guard let provider = channel as? SocketOptionProvider else {
            promise.succeed()
            return
        }
        let info: EventLoopFuture<LinuxTCPInfo> = provider.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel(rawValue: Int32(IPPROTO_TCP)),
            name: NIOBSDSocket.Option(rawValue: TCP_INFO))
        info.whenComplete { result in
            switch result {
            case .success(let info) where info.state == synSent:
                // Still waiting for the SYN-ACK: look again soon (backing off to 10 ms); the
                // flow's connection timeout bounds the whole wait.
                channel.eventLoop.scheduleTask(in: delay) {
                    poll(channel, promise: promise, delay: min(delay * 2, .milliseconds(10)))
                }
            case .success(let info) where info.state == closed:
                // Reset during the handshake.
                promise.fail(FlowError.posix(ECONNREFUSED))
            case .success:
                // ESTABLISHED, or already past it (the peer may have answered and closed).
                promise.succeed()
            case .failure(let error):
                promise.fail(error)
            }
        }
    }
}
