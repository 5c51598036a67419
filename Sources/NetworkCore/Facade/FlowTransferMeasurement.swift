import NIOCore

/// A data-transfer measurement in progress on one flow: the counters read when it started, and
/// those read when it is finished.
package final class FlowTransferMeasurement: Sendable {
    private let flow: Flow
    private let start: EventLoopFuture<FlowTransferCounters>

    init(flow: Flow) {
        self.flow = flow
        self.start = flow.transferCounters()
    }

    /// Reads the counters again and calls `completion` (on the flow's loop) with both readings;
    /// not called if the flow's loop cannot run it.
    package func finish(_ completion: @escaping @Sendable (_ begin: FlowTransferCounters, _ end: FlowTransferCounters) -> Void) {
        start.and(flow.transferCounters()).whenSuccess { begin, end in completion(begin, end) }
    }
}
