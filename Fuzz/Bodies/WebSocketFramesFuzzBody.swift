import NIOCore
import NIOEmbedded
import NIOWebSocket
import NetworkCore

/// What a WebSocket server sends a client once the upgrade is done, through NIO's frame decoder
/// and our `WebSocketMessageAssembler` (message assembly, control frames, close-frame parsing, UTF-8
/// and size checks). However the stream is cut into reads, the same messages and the same
/// verdicts must come out, and no more than one message's bound may be held.
enum WebSocketFramesFuzzBody {
    /// Small, so that oversized messages are common inputs.
    static let maximumMessageSize = 4_096

    static func run(_ bytes: [UInt8]) {
        let whole = outcomes(in: [bytes])
        let pieces = outcomes(in: FuzzChunks.split(bytes))
        FuzzFailure.check(whole == pieces, "WebSocket messages depend on how the stream was cut")
    }

    private static func outcomes(in chunks: [[UInt8]]) -> [String] {
        let collector = WebSocketFrameCollector(maximumMessageSize: maximumMessageSize)
        let channel = EmbeddedChannel()
        do {
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: maximumMessageSize)))
            try channel.pipeline.syncOperations.addHandler(collector)
        } catch {
            FuzzFailure.check(false, "pipeline setup failed: \(error)")
        }
        for chunk in chunks where !collector.stopped {
            do {
                try channel.writeInbound(ByteBuffer(bytes: chunk))
            } catch {
                collector.outcomes.append("decoder refused the stream")
                break
            }
        }
        _ = try? channel.finish()
        return collector.outcomes
    }
}
