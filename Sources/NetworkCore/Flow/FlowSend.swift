import Foundation
import NIOCore

/// One send as the flow carries it from the caller to the socket.
///
/// Its bytes are in one of two places and its completion is of one of two kinds, so each pair is
/// one enum (`Bytes`, `Completion`); a datagram completion is an object, not a value of any
/// type: 47 bytes, a plain value (`FlowSendLayoutTests`). An idle connection's pending receive
/// waits in an array of operations as large as a send, and every send is handed on a few times
/// on its way to the loop (moved where it can be: `consuming`), so the size counts.
package struct FlowSend: Sendable {
    private enum Bytes {
        case none
        case buffer(ByteBuffer)
        case data(Data)
    }

    private enum Completion {
        case none
        /// Hands a handler on to the application's queue, run there inside its ticket.
        case stream(Flow.SendCompletion)
        /// Does all its work when called (resumes a waiting task) and never runs its ticket.
        case streamInline(Flow.SendCompletion)
        case datagram(any FlowDatagramCompletion)
    }

    private var bytes: Bytes
    private var completionKind: Completion = .none
    /// Ends the message (one datagram on UDP).
    package var isComplete: Bool
    /// Ends the sending side once complete (a final context).
    package var closesWrite: Bool
    /// Its bytes count in the send budget until the loop writes them.
    package var counted = false
    /// A datagram's ECN codepoint for its IP header (RFC 3168: 1 ECT(1), 2 ECT(0), 3 CE); 0
    /// leaves it as the socket has it.
    package var ecn: UInt8 = 0
    /// A datagram's DSCP (a service class of its own, from its IP metadata); nil leaves the
    /// socket's (the parameters' service class).
    package var dscp: UInt8?

    /// `completesInline`: see `completionRunsInline`.
    package init(
        data: ByteBuffer?, isComplete: Bool, closesWrite: Bool, completion: Flow.SendCompletion? = nil,
        completesInline: Bool = false
    ) {
        self.bytes = data.map { .buffer($0) } ?? .none
        self.isComplete = isComplete
        self.closesWrite = closesWrite
        if let completion { self.completionKind = completesInline ? .streamInline(completion) : .stream(completion) }
    }

    /// A send whose bytes are still in the caller's `Data` (`uncopied`), made whole at once:
    /// made empty and then given its bytes, it was copied in between.
    package init(
        uncopied: consuming Data?, isComplete: Bool, closesWrite: Bool, completion: consuming Flow.SendCompletion? = nil,
        completesInline: Bool = false
    ) {
        if let uncopied { self.bytes = .data(uncopied) } else { self.bytes = .none }
        self.isComplete = isComplete
        self.closesWrite = closesWrite
        if let completion { self.completionKind = completesInline ? .streamInline(completion) : .stream(completion) }
    }

    /// The bytes, in a buffer the loop can write. Setting bytes replaces `uncopied`; setting nil
    /// clears only bytes held here.
    package var data: ByteBuffer? {
        get {
            if case .buffer(let buffer) = bytes { return buffer }
            return nil
        }
        set {
            if let newValue {
                bytes = .buffer(newValue)
            } else if case .buffer = bytes {
                bytes = .none
            }
        }
    }

    /// Bytes still in the caller's `Data`. A datagram's stay there until the loop copies every
    /// such send of one hop into one buffer (`Flow.gatherDatagramBytes`), one allocation instead
    /// of one each; a stream send's are written from there directly, or, for a large one, by the
    /// loop (`Flow+UncopiedSends`), or else copied into a reused buffer before the loop sees them
    /// (`FlowMailbox.submitStreamSend`). Setting bytes replaces
    /// `data`; setting nil clears only bytes held here.
    package var uncopied: Data? {
        get {
            if case .data(let data) = bytes { return data }
            return nil
        }
        set {
            if let newValue {
                bytes = .data(newValue)
            } else if case .data = bytes {
                bytes = .none
            }
        }
    }

    /// Whether there are bytes (`data` or `uncopied` is not nil), without copying them out.
    package var holdsBytes: Bool {
        if case .none = bytes { return false }
        return true
    }

    /// Whether bytes are held in a buffer (`data` is not nil), without copying the buffer out.
    package var holdsBuffer: Bool {
        if case .buffer = bytes { return true }
        return false
    }

    /// Moves the bytes held in a buffer out (nil for none), leaving none: for where the bytes go
    /// on alone, without a retain and release of their storage.
    package mutating func takeData() -> ByteBuffer? {
        var taken = Bytes.none
        swap(&taken, &bytes)
        switch consume taken {
        case .buffer(let buffer):
            return buffer
        case let other:
            bytes = other
            return nil
        }
    }

    /// Moves the bytes still in the caller's `Data` into a buffer the loop can write (a copy):
    /// into `spare`, reused, when there is one.
    package mutating func copyUncopied(into spare: ByteBuffer? = nil) {
        guard let bytes = uncopied else { return }
        var buffer = spare ?? ByteBufferAllocator().buffer(capacity: bytes.count)
        buffer.clear(minimumCapacity: bytes.count)
        buffer.writeBytes(bytes)
        data = buffer
    }

    /// A stream send's completion. Nil when nobody waits, or when the send already completed as
    /// it was taken. Setting one replaces a datagram completion (and is not inline); setting nil
    /// clears only this kind.
    package var completion: Flow.SendCompletion? {
        get {
            switch completionKind {
            case .stream(let completion), .streamInline(let completion): return completion
            case .none, .datagram: return nil
            }
        }
        set {
            if let newValue {
                completionKind = .stream(newValue)
            } else if case .stream = completionKind {
                completionKind = .none
            } else if case .streamInline = completionKind {
                completionKind = .none
            }
        }
    }

    /// The stream completion does all its work when called and never runs its ticket (the 2025
    /// API's sends resume their task from it). Called as the send is taken, it leaves no handler
    /// to come: the flow must not hold the loop's wake-up back for one (`FlowInbox.admitSend`),
    /// or whatever was queued meanwhile would wait for ever.
    package var completionRunsInline: Bool {
        if case .streamInline = completionKind { return true }
        return false
    }

    /// A datagram send's completion (the only kind a datagram send has), settled with the other
    /// datagrams of its flush (`DatagramOutbox`). Setting one replaces a stream completion;
    /// setting nil clears only this kind.
    package var datagramCompletion: (any FlowDatagramCompletion)? {
        get {
            if case .datagram(let completion) = completionKind { return completion }
            return nil
        }
        set {
            if let newValue {
                completionKind = .datagram(newValue)
            } else if case .datagram = completionKind {
                completionKind = .none
            }
        }
    }

    /// The size of the bytes still in the caller's `Data`, nil when there are none there; reads
    /// it without copying the `Data` out (`uncopied` would retain its storage).
    package var uncopiedCount: Int? {
        if case .data(let data) = bytes { return data.count }
        return nil
    }

    /// Moves the datagram completion out (nil for none), leaving none: for where the send
    /// ends and its completion goes on alone, without a retain and release of it.
    package mutating func takeDatagramCompletion() -> (any FlowDatagramCompletion)? {
        guard case .datagram(let completion) = completionKind else { return nil }
        completionKind = .none
        return completion
    }

    package var byteCount: Int {
        switch bytes {
        case .none: return 0
        case .buffer(let buffer): return buffer.readableBytes
        case .data(let data): return data.count
        }
    }

}
