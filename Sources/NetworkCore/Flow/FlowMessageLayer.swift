import Foundation
import NIOCore

/// The layer right under a framed flow's handler (the top framer, or WebSocket's message
/// handler), joined to it (`FlowChannelHandler.join`): messages pass between them in direct
/// calls instead of through the pipeline, which boxes every message in a `NIOAny` and casts it
/// back (two allocations and a dynamic cast per message). Other events (read complete, errors,
/// flushes, closes) still travel the pipeline, after the messages they follow. All calls come on
/// the channel's event loop.
protocol FlowMessageLayer: AnyObject {
    /// A message from the flow, as a pipeline write would bring it.
    func send(_ message: FramedMessage, promise: EventLoopPromise<Void>?)
    /// A whole message the application sent from the loop (`Flow+LoopCallers`), still in its
    /// `Data`: the layer copies it into a buffer of its choosing.
    func send(copying data: Data, metadata: (any AnyObject & Sendable)?)
    /// From now on the layer's messages go to `receiver` instead of up the pipeline.
    func deliverMessages(to receiver: any FramedMessageReceiver)
}

extension FlowMessageLayer {
    func send(copying data: Data, metadata: (any AnyObject & Sendable)?) {
        send(FramedMessage(copying: data, metadata: metadata), promise: nil)
    }
}
