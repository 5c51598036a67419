#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore
import NetworkDNS

/// Sends on the loop: the state decides (`FlowStateMachine.sendDecision`), the send path shapes
/// the bytes (`FlowSendPath`), and this writes them and completes the send.
extension Flow {
    func sendOnLoop(_ send: consuming FlowSend) {
        switch machine.sendDecision {
        case .hold:
            sendPath.hold(send)
        case .write:
            write(consume send)
            flushIfNeeded()
        case .fail(let error):
            finish(send, error)
        }
    }

    /// A send's end on the loop: calls its completion, if it still has one, and gives its share
    /// of the send budget back.
    func finish(_ send: FlowSend, _ error: FlowError?) {
        if let completion = send.datagramCompletion {
            return FlowDatagramCompletions(completion, error).deliver()
        }
        let stream = transportKind.isStream
        send.completion?(error, SendCompletionTicket(flow: stream ? self : nil, early: false))
        guard stream, send.counted || send.completion != nil else { return }
        let bytes = send.byteCount
        let called = send.completion != nil
        let settled = mailbox.settle(bytes: bytes, counted: send.counted, calledCompletion: called, written: send.data)
        if settled.checkPool { scheduleSpareBufferCheck() }
        // (Direct writes need the budget drained: no use asking the channel before.)
        if settled.drained { armDirectWritesIfIdle() }
    }

    /// Checks, now and then while the flow keeps send buffers for reuse, that its sends still
    /// use them (`SendBufferPool`). Holds the flow strongly, not weakly: a weak reference gives
    /// the flow a side table, which sends every later retain and release of it down the
    /// runtime's slow path (with the channel core's: 5 slow retains per 2025-API round trip,
    /// counted). The checks end, and let the flow go, once a check finds the pool unused: at
    /// most two intervals after the flow's last send.
    private func scheduleSpareBufferCheck() {
        eventLoop.scheduleTask(in: .init(SendBufferPool.checkInterval)) { [self] in
            guard mailbox.checkSpareBuffers() else { return }
            scheduleSpareBufferCheck()
        }
    }

    /// Lets senders write to the socket from their threads again (`FlowMailbox`) once nothing of
    /// this flow waits to be written: no operation in hand, no unflushed write, nothing buffered
    /// in the channel. On the loop; the mailbox arms only if nothing was queued meanwhile.
    func armDirectWritesIfIdle() {
        guard directSocketAttached, batchDepth == 0, !needsFlush, uncopiedSends.isEmpty, machine.isReady,
            !sendPath.writeClosed, case .owned(let channel) = transport
        else { return }
        guard Self.holdsNothing(channel) else { return }
        mailbox.armDirectWrites(true)
    }

    /// Whether nothing waits in `channel`'s outbound buffer (bytes the loop wrote and the socket
    /// has not taken yet), so that bytes written around it cannot overtake any. On the loop.
    static func holdsNothing(_ channel: Channel) -> Bool {
        ((try? channel.syncOptions?.getOption(ChannelOptions.bufferedWritableBytes)) ?? 1) == 0
    }

    /// A direct write met a failed socket (`FlowOperation.directWriteFailed`): the flow fails as
    /// if NIO had reported the error.
    func directWriteFailed(_ code: Int32) {
        guard case .owned(let channel) = transport else { return }
        transportError(.posix(code), channel: channel)
    }

    /// The socket is closing or failed: sends go through the loop again, and the duplicate
    /// descriptor is closed (it would keep the socket open).
    func detachDirectSocket() {
        if let writer = mailbox.datagramWriter {
            writer.release()
            mailbox.setDatagramWriter(nil)
        }
        guard directSocketAttached else { return }
        directSocketAttached = false
        mailbox.setDirectSocket(nil)
    }

    /// Writes without flushing; the caller flushes (so batches leave together).
    func write(_ send: consuming FlowSend) {
        guard let channel = transport.channel else {
            finish(send, .posix(ENOTCONN))
            return
        }
        if send.uncopiedCount != nil {
            if holdUncopied(send, channel: channel) { return }
            send.copyUncopied()
        }
        // Held sends go first: the channel must not take bytes ahead of theirs.
        if !uncopiedSends.isEmpty { writeUncopiedSends(to: channel) }
        writeToChannel(consume send, channel: channel)
    }

    /// `write`'s part once the bytes are in a buffer: through the channel, unflushed.
    func writeToChannel(_ send: consuming FlowSend, channel: Channel) {
        switch sendPath.step(&send, datagrams: receives.mode == .datagram) {
        case .rejected(let error):
            settle(send, error)
        case .absorbed:
            settle(send, nil)
        case .stream(let data, let closesOutput):
            let promise = writePromise(for: send, on: channel)
            if let data {
                NetworkLog.traceConnection("send \(data.readableBytes) bytes", metadata: logMetadata)
                report.sentBytes += UInt64(data.readableBytes)
                channel.write(data, promise: promise)
                needsFlush = true
            } else {
                promise?.succeed()
            }
            if closesOutput {
                mailbox.budget { $0.setOpen(false) }
                channel.flush()
                needsFlush = false
                let shut = eventLoop.makePromise(of: Void.self)
                shut.futureResult.whenSuccess { self.directionEnded(self.machine.outputShut()) }
                channel.close(mode: .output, promise: shut)
            }
        case .datagram:
            let datagram = send.takeData() ?? ByteBuffer()
            let length = datagram.readableBytes
            NetworkLog.traceConnection("send datagram of \(length) bytes", metadata: logMetadata)
            report.sentBytes += UInt64(length)
            // Written at the flush, with the rest of its batch (`DatagramOutbox`).
            datagramOutbox.append(datagram: datagram, completion: send.takeDatagramCompletion(), ecn: send.ecn, dscp: send.dscp)
            needsFlush = true
        }
    }

    /// A send that put nothing on the wire is done; a datagram one waits for the datagrams
    /// taken before it.
    private func settle(_ send: FlowSend, _ error: FlowError?) {
        if receives.mode == .datagram { settleDatagramSend(send, error) } else { finish(send, error) }
    }

    /// A promise that finishes `send` once the socket took it; nil when nothing waits for that.
    private func writePromise(for send: FlowSend, on channel: Channel) -> EventLoopPromise<Void>? {
        // (A framed send's completion is the datagram kind, also when a stream runs above the
        // framers.)
        guard send.completion != nil || send.counted || send.datagramCompletion != nil else { return nil }
        let promise = eventLoop.makePromise(of: Void.self)
        promise.futureResult.whenComplete { result in
            switch result {
            case .success:
                self.finish(send, nil)
            case .failure(let error):
                let failure = FlowError(error)
                guard error is IOError else { return self.finish(send, failure) }
                // A write the socket refused (EPIPE, ECONNRESET) makes NIO close the channel
                // without an `errorCaught`: the flow must fail with that error before the channel
                // going inactive reads like the peer's orderly end of stream. Closing the
                // transport would fail the sends held behind this one at once, ahead of it: they
                // are taken first and fail after it, in order.
                let behind = self.takeUncopiedSends()
                self.transportError(failure, channel: channel)
                self.finish(send, failure)
                for held in behind { self.finish(held, failure) }
            }
        }
        return promise
    }
}
