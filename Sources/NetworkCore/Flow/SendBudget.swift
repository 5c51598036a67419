/// How much a stream flow may take from its callers before the event loop has written it.
///
/// A ready stream flow treats its own bounded outbound buffer as the kernel treats a socket's
/// send buffer: a send whose bytes fit (the bytes taken but not yet written are under
/// `highWater`) is complete as soon as it is taken, on the caller's thread, without waiting for
/// a hop to the event loop and back. Only when the buffer is full does a completion wait until
/// the loop has written the bytes, which is the backpressure a sender that sends its next chunk
/// from the previous completion feels. Completions stay in order: while the loop still owes any
/// completion, no later send completes early.
///
/// Checked and updated under the flow's inbox lock: the caller's side (`admit`, `close`) runs on
/// any thread, the loop's side (`settle`, `setOpen`) on the flow's event loop.
package struct SendBudget: Sendable {
    /// Bytes a flow takes ahead of its socket before completions wait for writes. With 64 KiB
    /// sends this keeps a few in the pipeline, enough for the caller and the loop to work at
    /// the same time; it is also what one connection may hold beyond its last send.
    package static let highWater = 512 * 1024

    /// Bytes taken and not yet written to the socket (or dropped).
    package private(set) var unwritten = 0
    /// Completions the loop has still to call.
    package private(set) var owedCompletions: Int32 = 0
    /// Set by the loop: the flow is ready and its sends go straight to the socket.
    private var open = false
    /// Set by the caller, for good: a cancel or a final send was issued, so later sends must
    /// reach the loop to learn their fate (ECANCELED, EPIPE).
    private var closing = false

    /// What becomes of one send.
    package struct Admission: Equatable {
        /// Its bytes count until `settle` gives them back.
        package var counted: Bool
        /// Its completion may be called now, by the caller; the loop will not call it.
        package var completeNow: Bool

        package init(counted: Bool, completeNow: Bool) {
            self.counted = counted
            self.completeNow = completeNow
        }
    }

    package init() {}

    /// Takes a send of `bytes`; `hasCompletion` says whether someone waits for it, `closesWrite`
    /// whether it ends the sending side (it then completes only once written, so that its
    /// completion means everything went out).
    package mutating func admit(
        bytes: Int, hasCompletion: Bool, closesWrite: Bool, mayCompleteNow: Bool = true
    ) -> Admission {
        var admission = Admission(counted: false, completeNow: false)
        if open && !closing {
            admission.counted = true
            admission.completeNow =
                mayCompleteNow && hasCompletion && !closesWrite && owedCompletions == 0 && unwritten < Self.highWater
            unwritten += bytes
        }
        if closesWrite { closing = true }
        if hasCompletion && !admission.completeNow { owedCompletions += 1 }
        return admission
    }

    /// Whether a send may go to the socket from the sender's thread (`FlowInbox`): the flow is
    /// ready, no close was asked for, no completion is owed and nothing waits to be written.
    package var acceptsDirectWrites: Bool {
        open && !closing && owedCompletions == 0 && unwritten == 0
    }

    /// A cancel (or a final send) was issued: what follows must reach the loop.
    package var isClosing: Bool { closing }

    /// The caller cancelled: no later send completes early.
    package mutating func close() {
        closing = true
    }

    /// The loop wrote (or dropped) a send: gives back its bytes if they were `counted`, and its
    /// completion, if the loop owed one, has been called.
    package mutating func settle(bytes: Int, counted: Bool, calledCompletion: Bool) {
        if counted { unwritten -= bytes }
        if calledCompletion { owedCompletions -= 1 }
    }

    /// The loop reports whether the flow is ready with its sending side open.
    package mutating func setOpen(_ open: Bool) {
        self.open = open
    }
}
