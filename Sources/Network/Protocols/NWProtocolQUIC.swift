import NetworkCore
import NetworkSync

/// QUIC (RFC 9000) with TLS 1.3 inside it: its definition, options and metadata. A connection
/// made with QUIC parameters carries one bidirectional stream as its byte stream, or, with
/// ``Options/isDatagram``, the connection's datagrams (RFC 9221).
public final class NWProtocolQUIC: NWProtocol, @unchecked Sendable {

    /// The definition identifying QUIC (named `quic`).
    public static let definition: NWProtocolDefinition = NWProtocolDefinition(name: "quic")

    /// QUIC settings for a connection: the application protocols (ALPN, which QUIC requires),
    /// the TLS settings inside it, and the transport parameters this side announces. The
    /// properties may be used from any thread.
    public final class Options: NWProtocolOptions, @unchecked Sendable {
        /// The kind of stream a connection made from these options opens.
        public enum Direction: Equatable, Hashable, Sendable {
            /// Both sides send on the stream.
            case bidirectional
            /// Only the side that opens the stream sends on it.
            case unidirectional
        }

        private struct State {
            var alpn: [String] = []
            var direction = Direction.bidirectional
            var settings = QUICSettings()
            var isDatagram = false
            var maxDatagramFrameSize = 0
        }

        private let state: Lock<State>

        /// The TLS 1.3 settings inside QUIC (verify blocks, identities, server name), changed
        /// with the `sec_protocol_options_*` functions as for ``NWProtocolTLS/Options``.
        public let securityProtocolOptions: sec_protocol_options_t

        /// Creates options with QUIC's defaults and no application protocol yet (set ``alpn``:
        /// a handshake needs one).
        public init() {
            state = Lock(State())
            securityProtocolOptions = sec_protocol_options_t()
            super.init(definition: NWProtocolQUIC.definition)
        }

        /// Creates options offering the application protocols `alpn`, most preferred first.
        public convenience init(alpn: [String]) {
            self.init()
            self.alpn = alpn
        }

        private init(copying state: State, security: sec_protocol_options_t) {
            self.state = Lock(state)
            securityProtocolOptions = security.copy()
            super.init(definition: NWProtocolQUIC.definition)
        }

        /// The application protocols offered in the handshake (ALPN), most preferred first.
        public var alpn: [String] {
            get { state.withLock { $0.alpn } }
            set { state.withLock { $0.alpn = newValue } }
        }

        /// The kind of stream a connection made from these options opens (from a group, or on a
        /// QUIC connection of its own); a unidirectional one only sends.
        public var direction: Direction {
            get { state.withLock { $0.direction } }
            set { state.withLock { $0.direction = newValue } }
        }

        /// How long the connection may stay silent before it ends, in milliseconds (0: the
        /// default of 30 seconds).
        public var idleTimeout: Int {
            get { state.withLock { Int($0.settings.idleTimeout.nanoseconds / 1_000_000) } }
            set { state.withLock { $0.settings.idleTimeout = .milliseconds(Int64(newValue > 0 ? newValue : 30_000)) } }
        }

        /// The largest UDP payload this side sends, in bytes (0: QUIC's default; at least 1,200).
        public var maxUDPPayloadSize: Int {
            get { state.withLock { $0.settings.maxUDPPayloadSize } }
            set { state.withLock { $0.settings.maxUDPPayloadSize = max(0, newValue) } }
        }

        /// How many bytes the peer may send on the whole connection before this side reads.
        public var initialMaxData: Int {
            get { state.withLock { Int(clamping: $0.settings.maxData) } }
            set { state.withLock { $0.settings.maxData = UInt64(max(0, newValue)) } }
        }

        /// How many bytes the peer may send on a bidirectional stream this side opened.
        public var initialMaxStreamDataBidirectionalLocal: Int {
            get { state.withLock { Int(clamping: $0.settings.maxStreamDataBidirectionalLocal) } }
            set { state.withLock { $0.settings.maxStreamDataBidirectionalLocal = UInt64(max(0, newValue)) } }
        }

        /// How many bytes the peer may send on a bidirectional stream it opened.
        public var initialMaxStreamDataBidirectionalRemote: Int {
            get { state.withLock { Int(clamping: $0.settings.maxStreamDataBidirectionalRemote) } }
            set { state.withLock { $0.settings.maxStreamDataBidirectionalRemote = UInt64(max(0, newValue)) } }
        }

        /// How many bytes the peer may send on a unidirectional stream.
        public var initialMaxStreamDataUnidirectional: Int {
            get { state.withLock { Int(clamping: $0.settings.maxStreamDataUnidirectional) } }
            set { state.withLock { $0.settings.maxStreamDataUnidirectional = UInt64(max(0, newValue)) } }
        }

        /// How many bidirectional streams the peer may open.
        public var initialMaxStreamsBidirectional: Int {
            get { state.withLock { Int(clamping: $0.settings.maxBidirectionalStreams) } }
            set { state.withLock { $0.settings.maxBidirectionalStreams = UInt64(max(0, newValue)) } }
        }

        /// How many unidirectional streams the peer may open.
        public var initialMaxStreamsUnidirectional: Int {
            get { state.withLock { Int(clamping: $0.settings.maxUnidirectionalStreams) } }
            set { state.withLock { $0.settings.maxUnidirectionalStreams = UInt64(max(0, newValue)) } }
        }

        /// Whether these options describe the connection's datagram flow (RFC 9221) rather than
        /// a stream: each send is one QUIC datagram, each receive one datagram, as on UDP. With
        /// ``maxDatagramFrameSize`` left at 0, such a connection accepts frames of up to 65,535
        /// bytes.
        public var isDatagram: Bool {
            get { state.withLock { $0.isDatagram } }
            set { state.withLock { $0.isDatagram = newValue } }
        }

        /// The largest QUIC datagram frame this side accepts (0: none, unless ``isDatagram``).
        public var maxDatagramFrameSize: Int {
            get { state.withLock { $0.maxDatagramFrameSize } }
            set { state.withLock { $0.maxDatagramFrameSize = max(0, newValue) } }
        }

        /// The transport parameters, for the engine.
        package var quicSettings: QUICSettings {
            state.withLock { state in
                var settings = state.settings
                settings.unidirectional = state.direction == .unidirectional
                let frameSize = state.maxDatagramFrameSize > 0 ? state.maxDatagramFrameSize : (state.isDatagram ? 65_535 : 0)
                settings.maxDatagramFrameSize = UInt64(frameSize)
                return settings
            }
        }

        /// An independent copy of these options.
        package override func copyOptions() -> NWProtocolOptions {
            Options(copying: state.withLock { $0 }, security: securityProtocolOptions)
        }
    }

    /// An application's error code for a QUIC stream or connection, with an optional reason.
    public struct ApplicationError: ExpressibleByIntegerLiteral, Sendable {
        /// The code, from the application protocol's own space.
        public let code: UInt64
        /// A reason phrase, for people.
        public let reason: String?

        /// Creates an error with `code` and an optional `reason`.
        public init(code: UInt64, reason: String? = nil) {
            self.code = code
            self.reason = reason
        }

        /// Creates an error with the code `value` and no reason.
        public init(integerLiteral value: UInt64) {
            self.init(code: value)
        }
    }

    /// Facts about a QUIC connection and the stream a connection carries, and the settings of
    /// both that can change while it runs (error codes for its close, keep-alive, stream limits).
    public final class Metadata: NWProtocolMetadata, @unchecked Sendable {
        /// When an idle connection sends PINGs to stay alive.
        public enum KeepAliveBehavior: Sendable {
            /// Never.
            case off
            /// After half the peer's idle timeout without traffic.
            case on
            /// After this many seconds without traffic.
            case seconds(Int)
        }

        /// The negotiated TLS session, read with the `sec_protocol_metadata_*` functions.
        public let securityProtocolMetadata: sec_protocol_metadata_t

        /// The stream the connection carries (0 for a client's first bidirectional stream; 0
        /// for a group's own metadata, which stands for the whole connection).
        public let streamIdentifier: UInt64

        /// The application protocol both sides agreed on.
        public var negotiatedALPN: String? {
            sec_protocol_metadata_get_negotiated_protocol(securityProtocolMetadata).map { String(cString: $0) }
        }

        /// The peer's idle timeout in milliseconds (0: it announced none).
        public var remoteIdleTimeout: Int { facts?.remoteIdleTimeout ?? 0 }

        /// How many bidirectional streams the peer let this side open at first.
        public var remoteMaxStreamsBidirectional: Int { facts?.remoteMaxStreamsBidirectional ?? 0 }

        /// How many unidirectional streams the peer let this side open at first.
        public var remoteMaxStreamsUnidirectional: Int { facts?.remoteMaxStreamsUnidirectional ?? 0 }

        /// The largest datagram the peer accepts in a DATAGRAM frame (0: none).
        public var usableDatagramFrameSize: Int { facts?.maxDatagramFrameSize ?? 0 }

        /// How many bidirectional streams the peer may have open at a time. Setting a larger
        /// value lets it open more now (the limit never shrinks).
        public var localMaxStreamsBidirectional: Int {
            get { state.withLock { $0.localBidirectional } }
            set { raiseStreamLimits(bidirectional: newValue, unidirectional: nil) }
        }

        /// How many unidirectional streams the peer may have open at a time (raised as above).
        public var localMaxStreamsUnidirectional: Int {
            get { state.withLock { $0.localUnidirectional } }
            set { raiseStreamLimits(bidirectional: nil, unidirectional: newValue) }
        }

        /// Whether the connection sends PINGs when idle; off unless set. Setting it applies at
        /// once.
        public var keepAlive: KeepAliveBehavior {
            get { state.withLock { $0.keepAlive } }
            set {
                state.withLock { $0.keepAlive = newValue }
                let interval: UInt64?
                switch newValue {
                case .off: interval = nil
                case .on:
                    // Half the peer's idle timeout (QUIC's default of 30 s when it announced none).
                    let idle = remoteIdleTimeout > 0 ? remoteIdleTimeout : 30_000
                    interval = UInt64(max(1_000, idle / 2)) * 1_000_000
                case .seconds(let seconds): interval = UInt64(max(1, seconds)) * 1_000_000_000
                }
                flow?.adjustQUIC(keepAlive: .some(interval), moreStreams: nil)
            }
        }

        /// The application error code a reset of this stream sends: set it, then
        /// `forceCancel()` the connection of a group's stream to reset it with this code.
        public var streamApplicationErrorCode: UInt64 {
            get { state.withLock { $0.streamError } }
            set {
                state.withLock { $0.streamError = newValue }
                flow?.setQUICApplicationErrors(stream: newValue, connection: nil)
            }
        }

        /// The application error the close of the QUIC connection sends: set it, then
        /// `cancel()` the connection (or the group) to close with this code and reason.
        public var applicationError: NWProtocolQUIC.ApplicationError {
            get { state.withLock { $0.connectionError } }
            set {
                state.withLock { $0.connectionError = newValue }
                flow?.setQUICApplicationErrors(stream: nil, connection: (newValue.code, newValue.reason))
            }
        }

        private struct State {
            var streamError: UInt64 = 0
            var connectionError = NWProtocolQUIC.ApplicationError(code: 0)
            var keepAlive = KeepAliveBehavior.off
            var localBidirectional: Int
            var localUnidirectional: Int
        }

        private let facts: QUICConnectionFacts?
        private let state: Lock<State>
        /// The connection's engine flow, which the settings reach.
        private let flow: Flow?

        package init(_ metadata: sec_protocol_metadata_t, connection facts: QUICConnectionFacts?, flow: Flow?) {
            securityProtocolMetadata = metadata
            streamIdentifier = UInt64(max(0, facts?.stream ?? 0))
            self.facts = facts
            self.flow = flow
            state = Lock(State(
                localBidirectional: facts?.localMaxStreamsBidirectional ?? 0,
                localUnidirectional: facts?.localMaxStreamsUnidirectional ?? 0))
            super.init(definition: NWProtocolQUIC.definition)
        }

        private func raiseStreamLimits(bidirectional: Int?, unidirectional: Int?) {
            let more = state.withLock { state -> (Int, Int) in
                var more = (0, 0)
                if let bidirectional, bidirectional > state.localBidirectional {
                    more.0 = bidirectional - state.localBidirectional
                    state.localBidirectional = bidirectional
                }
                if let unidirectional, unidirectional > state.localUnidirectional {
                    more.1 = unidirectional - state.localUnidirectional
                    state.localUnidirectional = unidirectional
                }
                return more
            }
            if more != (0, 0) { flow?.adjustQUIC(keepAlive: nil, moreStreams: more) }
        }
    }
}
