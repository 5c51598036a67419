import NIOCore

/// A layer with nothing to do before ready.
final class ReadyStackLayer: InboundStackLayer {
    private let eventLoop: EventLoop
    init(eventLoop: EventLoop) { self.eventLoop = eventLoop }
    func startLayer() -> EventLoopFuture<StackLayerFacts> { eventLoop.makeSucceededFuture(StackLayerFacts()) }
}
