import DequeModule
import NIOCore
import NetworkSystem

/// Where a flow's operations from other threads wait for its event loop, and when the loop has
/// to be woken for them.
///
/// Waking the loop costs a context switch (two, with the way back), more than most operations,
/// so one wake-up carries everything queued since the previous one. The loop is not woken while
/// - a wake-up is already on its way (`drainScheduled`);
/// - a `batch { }` is open;
/// - a send completion's handler runs on the caller's queue: it usually sends the next chunk,
///   and the wake-up waits until it returns; if that send completed at once (`SendBudget`), its
///   handler, already queued, follows, so the wait goes on along that chain, for at most
///   `maxChain` handlers. A sender that sends from its completions thus wakes the loop once per
///   budget's worth of data instead of once per send;
/// - everything queued is receives and the loop has a read outstanding (`readArmed`): the read
///   brings the loop anyway.
/// Some sends never wait here: while the loop has armed direct writes, a small send goes to
/// the socket on the sender's thread (`claimDirectWrite`, `finishDirectWrite`).
///
/// Mutated under the flow's lock; the caller acts on the returned "wake now" answers.
package struct FlowInbox<Operation> {
    /// Handlers in a row that may hold the wake-up back (each one adds a send at most, so this
    /// bounds how long a chain of tiny sends can keep data from the loop).
    package static var maxChain: Int { 16 }

    // Fields ordered so that the inbox packs into 80 bytes (it is part of every flow).
    package private(set) var operations: [Operation] = []
    package var budget = SendBudget()
    private var drainScheduled = false
    /// Handlers in a row that held the wake-up back.
    private var chain: UInt8 = 0
    /// Buffers of written sends, for the next sends to be copied into.
    package var spareBuffers = SendBufferPool()
    /// Set by the loop when nothing of this flow waits to be written (no operation queued or
    /// taken and not yet handled, nothing buffered in the channel): a send may then go to the
    /// socket from the sender's thread (`FlowMailbox`), since no earlier byte can be overtaken.
    package private(set) var directWritesArmed = false
    /// Set by the loop while a read is outstanding and nothing is buffered for a receive to
    /// take: lazy operations then wait for that read instead of waking the loop.
    package private(set) var readArmed = false
    private var batchDepth: Int32 = 0
    /// Sends that completed at once whose handlers have not started yet.
    private var earlyHandlersQueued: Int32 = 0
    /// Queued operations that were not lazy.
    private var eagerQueued: Int32 = 0
    /// Send completion handlers running now.
    private var runningHandlers: Int16 = 0
    /// A sender is writing to `directSocket` now (see `claimDirectWrite`).
    private var directWriteInProgress = false
    /// What `bypass` holds (here, in the padding before it).
    private var bypassIsDatagramPath = false
    /// The flow's way around the loop, by transport: the duplicate descriptor direct writes go
    /// to (plain TCP we connected), or a UDP flow's `DatagramPath`, as `bypassIsDatagramPath`
    /// says. (One field: a flow has one or the other, and every idle connection pays for each
    /// stored byte. Not an enum of the two: its case would live in the pointer's spare bits,
    /// where LeakSanitizer no longer sees the reference.)
    private var bypass: AnyObject?

    /// See `bypass`. (Setting it leaves a UDP flow's path alone.)
    package var directSocket: DirectSocket? {
        get {
            guard let bypass, !bypassIsDatagramPath else { return nil }
            return unsafeDowncast(bypass, to: DirectSocket.self)
        }
        set {
            if let newValue {
                bypass = newValue
                bypassIsDatagramPath = false
            } else if !bypassIsDatagramPath {
                bypass = nil
            }
        }
    }

    /// The UDP flow's path around the loop, made the first time it is asked for.
    package mutating func datagramPath() -> DatagramPath {
        if let path = existingDatagramPath { return path }
        let path = DatagramPath()
        bypass = path
        bypassIsDatagramPath = true
        return path
    }

    /// The UDP flow's socket writer, if it has one (`DatagramPath.writer`).
    var existingDatagramWriter: DatagramWriter? { existingDatagramPath?.writer }

    /// The UDP flow's path, if it has one yet.
    private var existingDatagramPath: DatagramPath? {
        guard let bypass, bypassIsDatagramPath else { return nil }
        return unsafeDowncast(bypass, to: DatagramPath.self)
    }
    /// Bytes written from senders' threads, in total (the loop adds them to what it sent).
    package private(set) var directlyWrittenBytes: UInt64 = 0
    package init() {}

    /// Queues `operation`; true when the caller must wake the loop. A `lazy` operation (a
    /// receive) does not wake the loop while it has a read armed (`readArmed`): the loop takes
    /// the mailbox before it handles whatever that read brings, which is the first moment the
    /// receive could matter.
    package mutating func append(_ operation: consuming Operation, lazy: Bool = false) -> Bool {
        // A batch gathers many sends (64 in a burst is common): room for them at once, instead
        // of the array growing by doubling through 1, 2, 4, … (an allocation each).
        if batchDepth > 0, operations.isEmpty { operations.reserveCapacity(Self.batchCapacity) }
        operations.append(operation)
        if !lazy { eagerQueued += 1 }
        return claimWake()
    }

    /// Leaves `datagrams` (the loop's, no receive waiting for them) for receives on any thread.
    package mutating func publishReady(_ datagrams: Deque<QueuedMessage>) {
        guard !datagrams.isEmpty else { return }
        datagramPath().ready.append(datagrams)
    }

    /// The bytes of the ready datagrams (they count against the flow's receive buffer).
    package var readyBytes: Int { existingDatagramPath?.ready.bytes ?? 0 }

    /// The first ready datagram, for a receive of at most `maximum` bytes on any thread; nil
    /// when the receive must go through the loop (nothing ready, a receive queued ahead of it,
    /// `isReceive` says which operations are; a datagram longer than it takes: the loop splits
    /// those; or after a cancel, which the receive must learn of from the loop).
    /// `resumeReading`: the caller must have the loop read again (`readyRoom`).
    package mutating func takeReady(
        maximum: Int, isReceive: (Operation) -> Bool
    ) -> (datagram: QueuedMessage, resumeReading: Bool)? {
        guard let path = existingDatagramPath, path.ready.count > 0, !budget.isClosing,
            !operations.contains(where: isReceive)
        else { return nil }
        return path.ready.take(maximum: maximum)
    }

    /// Ready datagrams the loop takes back when it takes receives (`take`): those receives came
    /// first, and the loop serves them from these before anything it holds. Also what a cancel
    /// drops.
    package mutating func reclaimReady() -> Deque<QueuedMessage> {
        existingDatagramPath?.ready.takeAll() ?? []
    }

    /// `reclaimReady` when a receive is queued (`isReceive`), else nothing.
    package mutating func reclaimReadyForQueuedReceives(isReceive: (Operation) -> Bool) -> Deque<QueuedMessage> {
        guard let path = existingDatagramPath, path.ready.count > 0, operations.contains(where: isReceive) else {
            return []
        }
        return path.ready.takeAll()
    }

    /// Whether the loop may read more datagrams with `count` and `bytes` of its own buffered:
    /// what is ready counts too (`ReadyDatagrams.room`).
    package mutating func readyRoom(count: Int, bytes: Int) -> Bool {
        guard let path = existingDatagramPath else {
            return count < Flow.datagramHighWaterCount && bytes < Flow.datagramHighWaterBytes
        }
        return path.ready.room(count: count, bytes: bytes)
    }

    /// Takes a send into the budget (see `SendBudget.admit`). When `queuesHandler`, an early
    /// completion hands a handler to a queue, counted as queued until `handlerStarts(early:
    /// true)`; a completion that does all its work when called (`FlowSend.completionRunsInline`)
    /// must not be counted, since nothing would ever uncount it.
    package mutating func admitSend(
        bytes: Int, hasCompletion: Bool, queuesHandler: Bool, closesWrite: Bool
    ) -> SendBudget.Admission {
        // While a direct write is under way its completion is owed first.
        let admission = budget.admit(
            bytes: bytes, hasCompletion: hasCompletion, closesWrite: closesWrite, mayCompleteNow: !directWriteInProgress)
        if admission.completeNow && queuesHandler { earlyHandlersQueued += 1 }
        return admission
    }

    /// Nothing is queued and no sender is writing to the socket: an operation issued on the loop
    /// itself can run at once without overtaking one from another thread.
    package var isIdle: Bool { operations.isEmpty && !directWriteInProgress }

    /// Everything queued, for the loop; the next operation wakes it again. Taking anything stops
    /// direct writes until the loop, done with it, arms them again.
    package mutating func take() -> [Operation] {
        drainScheduled = false
        // A direct write under way may still put its rest ahead of everything queued: the
        // writer wakes the loop again when it is done (`finishDirectWrite`).
        guard !directWriteInProgress else { return [] }
        eagerQueued = 0
        if !operations.isEmpty { directWritesArmed = false }
        var taken: [Operation] = []
        swap(&taken, &operations)
        return taken
    }

    /// The queued operations if all of them are lazy (receives waiting for the armed read), for
    /// the loop to take inside its read handler; otherwise nothing, since a wake-up is already
    /// on its way for the rest and they keep their order.
    package mutating func takeLazy() -> [Operation] {
        guard eagerQueued == 0, !operations.isEmpty else { return [] }
        var taken: [Operation] = []
        swap(&taken, &operations)
        return taken
    }

    /// The room a batch's first operation reserves.
    static var batchCapacity: Int { 64 }

    package mutating func beginBatch() {
        batchDepth += 1
    }

    /// True when the caller must wake the loop.
    package mutating func endBatch() -> Bool {
        batchDepth = max(0, batchDepth - 1)
        return claimWake()
    }

    /// A handler was queued that will start with `handlerStarts(early: true)`, as the handler of
    /// a send that completed at once is (`Flow.callbackQueued`).
    package mutating func handlerQueued() {
        earlyHandlersQueued += 1
    }

    /// A send completion's handler is about to run; `early` if its send completed at once (or
    /// was announced with `handlerQueued`).
    package mutating func handlerStarts(early: Bool) {
        runningHandlers += 1
        if early { earlyHandlersQueued = max(0, earlyHandlersQueued - 1) }
    }

    /// The handler returned; true when the caller must wake the loop.
    package mutating func handlerEnded() -> Bool {
        runningHandlers = max(0, runningHandlers - 1)
        guard runningHandlers == 0 else { return false }
        if earlyHandlersQueued > 0 && Int(chain) < Self.maxChain && needsLoop && !drainScheduled {
            chain += 1
            return false
        }
        return claimWake()
    }

    /// The loop says whether sends may go to the socket from their threads now (see
    /// `directWritesArmed`); arming waits while anything is queued for the loop.
    package mutating func armDirectWrites(_ armed: Bool) {
        directWritesArmed = armed && operations.isEmpty
    }

    /// The largest send written from the sender's thread. Direct writes save a request/response
    /// exchange its hop to the loop (measured: ~9 % less CPU per round trip, pinned); bulk
    /// senders do better through the loop, which gathers their sends into one system call per
    /// turn, from the callers' `Data` (`keepsUncopied`). (64 KiB sends written directly cost
    /// ~30 % more CPU per MiB: partial writes hand over to the loop and back.)
    package static var directWriteLimit: Int { 16 * 1024 }

    /// Whether a send of `bytes` may be written from the sender's thread now: small, armed, nothing
    /// queued ahead of it, no batch gathering sends, the budget open with no completion owed
    /// (so completions stay in order), and not the send that closes the sending side.
    package func mayWriteDirectly(bytes: Int, closesWrite: Bool) -> Bool {
        bytes <= Self.directWriteLimit && directSocket != nil && directWritesArmed && !directWriteInProgress
            && operations.isEmpty && batchDepth == 0 && !closesWrite && budget.acceptsDirectWrites
    }

    /// Whether a stream send of `bytes` too large to write from the sender's thread stays in the
    /// caller's `Data` for the loop (`Flow+UncopiedSends`): only where the loop can write it to
    /// the socket itself, and not the send that closes the sending side (which goes through the
    /// channel, for the shutdown after it).
    package func keepsUncopied(bytes: Int, closesWrite: Bool) -> Bool {
        bytes > Self.directWriteLimit && directSocket != nil && !closesWrite
    }

    /// The socket, for the loop to write a send still in its caller's `Data`: only while no
    /// sender can write to it (direct writes disarmed, none under way). The loop arms direct
    /// writes itself, so they stay disarmed until its write is done.
    package var directSocketForLoop: DirectSocket? {
        directWritesArmed || directWriteInProgress ? nil : directSocket
    }

    /// Claims the socket for one direct write, done outside the lock (a write to a loopback peer
    /// can run the peer's side in the same call, and the loop must not wait for the lock that
    /// long); nil when the send must go through the loop. Until `finishDirectWrite`, other
    /// senders queue and complete no earlier, and the loop takes nothing.
    package mutating func claimDirectWrite(bytes: Int, closesWrite: Bool) -> DirectSocket? {
        guard mayWriteDirectly(bytes: bytes, closesWrite: closesWrite) else { return nil }
        directWriteInProgress = true
        return directSocket
    }

    /// The claimed write put `bytes` on the socket; `queuesHandler` when it took the whole send
    /// and the sender now calls a completion that queues a handler (counted as for an early
    /// completion, see `admitSend`). The rest of a partial write, if any, must then go first
    /// (`prepend`). True when the caller must wake the loop for what was queued meanwhile.
    package mutating func finishDirectWrite(bytes: Int, queuesHandler: Bool) -> Bool {
        directWriteInProgress = false
        directlyWrittenBytes &+= UInt64(bytes)
        if queuesHandler { earlyHandlersQueued += 1 }
        return claimWake()
    }

    /// Queues `operation` ahead of everything queued (the rest of a partial direct write); true
    /// when the caller must wake the loop.
    package mutating func prepend(_ operation: Operation) -> Bool {
        operations.insert(operation, at: 0)
        eagerQueued += 1
        return claimWake()
    }

    /// The loop arms or disarms lazy operations (see `readArmed`); true when, disarming, it must
    /// wake itself for operations that were waiting for a read.
    package mutating func armRead(_ armed: Bool) -> Bool {
        readArmed = armed
        return armed ? false : claimWake()
    }

    /// Whether anything queued needs the loop now (lazy operations can wait for the armed read).
    private var needsLoop: Bool {
        eagerQueued > 0 || (!readArmed && !operations.isEmpty)
    }

    private mutating func claimWake() -> Bool {
        guard !drainScheduled, batchDepth == 0, runningHandlers == 0, needsLoop else { return false }
        drainScheduled = true
        chain = 0
        return true
    }
}
