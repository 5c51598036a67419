import Foundation
import NetworkCore

extension NWProtocolFramer {
    /// One connection's framer as its implementation sees it: the input to parse, the output to
    /// write, and the connection's readiness. Call it only from within the implementation's
    /// methods or an ``async(execute:)`` block: that is the connection's internal context.
    public final class Instance: CustomDebugStringConvertible, @unchecked Sendable {
        /// When a framer wants its `wakeup` called.
        public enum WakeupTime: Equatable, Hashable, Sendable {
            /// Never: cancels a wake-up scheduled before.
            case forever
            /// After this many milliseconds.
            case milliseconds(UInt64)
        }

        private let host: FramerHost
        package let definition: NWProtocolFramer.Definition
        /// The options the framer was placed in the stack with.
        public final let options: NWProtocolFramer.Options
        /// The parameters of the connection or listener the framer runs in.
        public final let parameters: NWParameters?

        private let side: FramerConnectionSide

        init(host: FramerHost, options: NWProtocolFramer.Options, parameters: NWParameters?, side: FramerConnectionSide) {
            self.host = host
            self.side = side
            self.definition = options.framerDefinition
            self.options = options
            self.parameters = parameters
        }

        /// The framer's label and connection.
        public var debugDescription: String { "framer \(definition.name)" }

        /// The peer's endpoint.
        public final var remote: NWEndpoint? { host.remoteAddress.flatMap(NWEndpoint.init) }
        /// This side's endpoint.
        public final var local: NWEndpoint? { host.localAddress.flatMap(NWEndpoint.init) }

        // MARK: Input

        /// Shows `parse` up to `maximumLength` of the input bytes not yet consumed, once at least
        /// `minimumIncompleteLength` are there (at the end of input: whatever is left, with
        /// `isComplete` true). `parse` returns how many bytes it consumed. Returns whether
        /// `parse` was called.
        public final func parseInput(
            minimumIncompleteLength: Int, maximumLength: Int, parse: (UnsafeMutableRawBufferPointer?, Bool) -> Int
        ) -> Bool {
            host.parseInput(minimum: minimumIncompleteLength, maximum: maximumLength, parse)
        }

        /// Delivers `data` as a message (or, with `isComplete` false, the start of one).
        public final func deliverInput(data: Data, message: NWProtocolFramer.Message, isComplete: Bool) {
            host.deliverInput(data, message: message, isComplete: isComplete)
        }

        /// Delivers the next `length` input bytes as a message without copying them. Returns
        /// false when they have not all arrived yet: they are delivered as they come, and
        /// `handleInput` is not called until then.
        public final func deliverInputNoCopy(length: Int, message: NWProtocolFramer.Message, isComplete: Bool) -> Bool {
            host.deliverInputNoCopy(length: length, message: message, isComplete: isComplete)
        }

        /// Stops framing input: every byte from now on goes to the application as it arrives.
        public final func passThroughInput() {
            host.passThroughInput()
        }

        // MARK: Output

        /// Within `handleOutput`: shows `parse` the message's bytes not yet written, as
        /// ``parseInput(minimumIncompleteLength:maximumLength:parse:)`` does for input.
        public final func parseOutput(
            minimumIncompleteLength: Int, maximumLength: Int, parse: (UnsafeMutableRawBufferPointer?, Bool) -> Int
        ) -> Bool {
            host.parseOutput(minimum: minimumIncompleteLength, maximum: maximumLength, parse)
        }

        /// Writes bytes of the framer's own (a header, a handshake).
        public final func writeOutput(data: Data) {
            host.writeOutput(data)
        }

        /// Writes bytes of the framer's own.
        public final func writeOutput<Output: DataProtocol>(data: Output) {
            host.writeOutput(Data(data))
        }

        /// Within `handleOutput`: writes the next `length` bytes of the message as they are.
        /// Throws `EINVAL` when the message has fewer left.
        public final func writeOutputNoCopy(length: Int) throws {
            do {
                try host.writeOutputNoCopy(length: length)
            } catch {
                throw NWError(error)
            }
        }

        /// Stops framing output: messages from now on are written as they are.
        public final func passThroughOutput() {
            host.passThroughOutput()
        }

        // MARK: Control

        /// The framer's handshake is done: the connection may become ready.
        public final func markReady() {
            host.markReady()
        }

        /// The connection fails with `error` (`ECONNABORTED` when nil).
        public final func markFailed(error: NWError?) {
            host.markFailed(error.map(FlowError.init))
        }

        /// Puts another protocol above this framer: it starts once the framer calls
        /// ``markReady()``, and the connection is ready when that protocol is (STARTTLS, or TLS
        /// through a tunnel the framer opened). Call it before `markReady`, from `start` or
        /// `handleInput`. TLS (``NWProtocolTLS/Options``) over TCP is supported, once per
        /// connection, by the top framer of the stack; other protocols throw
        /// `.posix(.EOPNOTSUPP)`, and a framer already ready `.posix(.EINVAL)`
        /// (docs/framer.md, "Prepending TLS").
        public final func prependApplicationProtocol(options: NWProtocolOptions) throws {
            guard let tls = options as? NWProtocolTLS.Options else { throw NWError.posix(.EOPNOTSUPP) }
            let settings = tls.securityProtocolOptions.flowConfiguration(
                peerHostName: side.listener ? nil : side.peerHostName, listener: side.listener)
            if let error = host.prepend(tls: settings) { throw NWError(error) }
        }

        /// Runs `execute` on the framer's context, after the current call returns.
        public final func async(execute: @escaping () -> Void) {
            host.async(execute)
        }

        /// Asks for a `wakeup` call at `wakeupTime` (replacing one asked for before).
        public final func scheduleWakeup(wakeupTime: NWProtocolFramer.Instance.WakeupTime) {
            switch wakeupTime {
            case .forever: host.scheduleWakeup(milliseconds: nil)
            case .milliseconds(let milliseconds): host.scheduleWakeup(milliseconds: milliseconds)
            }
        }
    }
}
