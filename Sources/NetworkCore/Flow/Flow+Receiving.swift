import Logging
import NIOCore
import NetworkDNS

/// Receives on the loop, and reading from the socket only while someone will take the bytes
/// (up to the high-water marks: backpressure).
extension Flow {
    func receiveOnLoop(minimum: Int, maximum: Int, receiver: FlowReceiver) {
        if let error = machine.receiveRejection {
            receiver.complete(.failure(error))
            return
        }
        complete(receives.enqueue(minimum: minimum, maximum: maximum, token: receiver))
        requestReadIfNeeded()
    }

    /// Calls the completions of receives that finished, in order; a stream whose end they
    /// delivered may now be over.
    func complete(_ finished: consuming ReceiveCompletions<FlowReceiver>) {
        finished.deliver { receiver, outcome in receiver.complete(outcome) }
        if receives.endOfStreamDelivered { directionEnded(machine.endOfStreamDelivered()) }
    }

    /// Performs what the end of one direction (`FlowStateMachine.outputShut`,
    /// `endOfStreamDelivered`) called for: nothing, or, as the second, the end of the stream.
    func directionEnded(_ actions: [FlowStateMachine.Action]) {
        guard !actions.isEmpty else { return }
        NetworkLog.connection.debug("both directions closed", metadata: logMetadata)
        perform(actions)
    }

    /// TLS a framer prepended runs above the framers (`TLSAboveFramer`): from now on the flow
    /// carries that protocol's byte stream. Before `ready` only.
    func carryStreamAboveFramers() {
        streamAboveFramers.store(true, ordering: .relaxed)
        messageLayer = nil
        complete(receives.becomeStream())
    }

    private var highWaterBytes: Int {
        receives.mode == .stream ? Self.streamHighWater : Self.datagramHighWaterBytes
    }

    /// Arms or disarms lazy receives (`FlowInbox.readArmed`): armed while a ready stream has a
    /// read outstanding and nothing buffered that a new receive could take, so that the read's
    /// outcome is the first thing that can complete it. Disarming wakes the loop for receives
    /// that were waiting.
    func updateReadArming() {
        var armed = false
        if machine.readInFlight, receives.mode == .stream, receives.bufferedBytes == 0,
            !receives.endOfStream, receives.terminalError == nil, case .owned = transport
        {
            armed = true
        }
        guard armed != readArmed else { return }
        readArmed = armed
        if mailbox.armRead(armed) { wakeLoop() }
    }

    /// Before the loop handles what an armed read brought: the receives that waited for it.
    /// Only receives run here, inside the channel's handler; when anything else is queued, a
    /// wake-up is on its way and everything waits for it, in order.
    func takeLazyOperations() {
        guard readArmed else { return }
        for operation in mailbox.takeLazy() {
            if case .receive(let minimum, let maximum, let receiver) = operation {
                receiveOnLoop(minimum: minimum, maximum: maximum, receiver: receiver)
            }
        }
    }

    func requestReadIfNeeded() {
        guard machine.mayRequestRead, case .owned(let channel) = transport, channel.isActive else {
            return
        }
        guard receives.wantsRead(highWater: highWaterBytes),
            receives.bufferedDatagramCount < Self.datagramHighWaterCount
        else { return }
        // (Datagrams left for other threads count too.)
        if mayLeaveReadyDatagrams,
            !mailbox.readyRoom(count: receives.bufferedDatagramCount, bytes: receives.bufferedBytes)
        {
            return
        }
        machine.readRequested()
        updateReadArming()
        channel.read()
    }

    /// Plain UDP (a connection's datagrams or a listener peer's, DTLS records included): whole
    /// datagrams no receive waits for may be left for receives on other threads to take without
    /// the loop (`FlowInbox.readyDatagrams`). Not under framers, whose messages may end with a
    /// stream. Fixed for the flow's life, so any thread may ask.
    var mayLeaveReadyDatagrams: Bool {
        EngineTuning.directIO && transportKind == .udp && !isFramed
    }

    /// Leaves the datagrams no receive waits for to receives on any thread. What the loop
    /// delivered before goes to its queues first (`DeliveryBatcher.flushIfOnLoop`): a receive
    /// that takes one of these must not overtake an earlier receive's completion.
    func publishReadyDatagrams() {
        guard mayLeaveReadyDatagrams, receives.bufferedDatagramCount > 0, receives.pendingReceiveCount == 0 else { return }
        let datagrams = receives.takeBufferedDatagrams()
        guard !datagrams.isEmpty else { return }
        DeliveryBatcher.forEventLoop(eventLoop).flushIfOnLoop()
        mailbox.publishReady(datagrams)
    }

    /// The outstanding read ended (its bytes were handled, the peer's end came, or the socket
    /// closed): lazy receives stop waiting for it.
    func readEnded() {
        machine.readCompleted()
        updateReadArming()
    }
}
