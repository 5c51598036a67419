import BenchSupport
import NIOCore
import NIOPosix

extension NIOAsyncRoundTripClient {
    /// The floor of any `async` round trip over NIO, without an engine: each connection's task
    /// prefers a task executor on its channel's event loop (as the 2025 API's scoped connections
    /// do), writes the request straight into the channel (it runs on the loop) and waits on a
    /// bare continuation that the channel's handler resumes when the reply is in. What this
    /// costs beyond NIO's handler-only round trip is what Swift concurrency itself adds (a
    /// suspension, a job enqueued on the loop, a resumption); what `NetworkConnection` costs
    /// beyond this is the engine. (`nio-bench rr --api loop-task`.)
    public func startOnLoopTasks(_ control: RunControl) {
        let request = ByteBuffer(repeating: UInt8(ascii: "x"), count: size)
        for i in 0..<conns {
            let loop = group.next()
            let replies = ReplyWaiter(size: size)
            Task(executorPreference: LoopTaskExecutor(loop: loop)) { [host, port, nports] in
                do {
                    let channel = try await ClientBootstrap(group: loop)
                        .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                        .channelInitializer { $0.pipeline.addHandler(replies) }
                        .connect(host: host, port: port + i % nports).get()
                    repeat {
                        channel.writeAndFlush(request, promise: nil)
                        await replies.next()
                    } while control.completed()
                    try await channel.close()
                } catch {
                    control.error()
                }
                control.connectionStopped()
            }
        }
    }
}
