import NetworkCore
import NetworkSync

/// The Transmission Control Protocol: its definition, options and connection metadata.
public final class NWProtocolTCP: NWProtocol, @unchecked Sendable {

    /// The definition identifying TCP (named `tcp`).
    public static let definition: NWProtocolDefinition = NWProtocolDefinition(name: "tcp")

    /// TCP settings for a connection or listener.
    ///
    /// Every value starts at `false` or `0`, which means "leave the system default". The
    /// properties may be read and written from any thread.
    public final class Options: NWProtocolOptions, @unchecked Sendable {
        private let settings: Lock<TCPSocketSettings>

        /// Creates options with every setting at its system default.
        public init() {
            settings = Lock(TCPSocketSettings())
            super.init(definition: NWProtocolTCP.definition)
        }

        private init(settings: TCPSocketSettings) {
            self.settings = Lock(settings)
            super.init(definition: NWProtocolTCP.definition)
        }

        private func value<T: Sendable>(_ keyPath: KeyPath<TCPSocketSettings, T> & Sendable) -> T {
            settings.withLock { $0[keyPath: keyPath] }
        }

        private func update<T: Sendable>(_ keyPath: WritableKeyPath<TCPSocketSettings, T> & Sendable, _ newValue: T) {
            settings.withLock { $0[keyPath: keyPath] = newValue }
        }

        /// Sends small segments at once instead of coalescing them (disables Nagle's algorithm).
        public var noDelay: Bool {
            get { value(\.noDelay) }
            set { update(\.noDelay, newValue) }
        }

        /// Holds back partial segments until a full one can be sent (`TCP_CORK` on Linux).
        public var noPush: Bool {
            get { value(\.noPush) }
            set { update(\.noPush, newValue) }
        }

        /// Sends no TCP options (such as timestamps or window scaling) in the handshake.
        public var noOptions: Bool {
            get { value(\.noOptions) }
            set { update(\.noOptions, newValue) }
        }

        /// Sends keepalive probes on an idle connection.
        public var enableKeepalive: Bool {
            get { value(\.enableKeepalive) }
            set { update(\.enableKeepalive, newValue) }
        }

        /// How many unanswered keepalive probes end the connection (0: system default).
        public var keepaliveCount: Int {
            get { value(\.keepaliveCount) }
            set { update(\.keepaliveCount, newValue) }
        }

        /// Seconds of idleness before the first keepalive probe (0: system default).
        public var keepaliveIdle: Int {
            get { value(\.keepaliveIdle) }
            set { update(\.keepaliveIdle, newValue) }
        }

        /// Seconds between keepalive probes (0: system default).
        public var keepaliveInterval: Int {
            get { value(\.keepaliveInterval) }
            set { update(\.keepaliveInterval, newValue) }
        }

        /// The largest segment size to use, in bytes (0: system default).
        public var maximumSegmentSize: Int {
            get { value(\.maximumSegmentSize) }
            set { update(\.maximumSegmentSize, newValue) }
        }

        /// Seconds to wait for the handshake to complete before failing (0: system default).
        public var connectionTimeout: Int {
            get { value(\.connectionTimeout) }
            set { update(\.connectionTimeout, newValue) }
        }

        /// Seconds to keep probing a peer that advertises a zero window (0: system default).
        public var persistTimeout: Int {
            get { value(\.persistTimeout) }
            set { update(\.persistTimeout, newValue) }
        }

        /// Seconds of unacknowledged retransmissions after which the connection is dropped
        /// (0: system default).
        public var connectionDropTime: Int {
            get { value(\.connectionDropTime) }
            set { update(\.connectionDropTime, newValue) }
        }

        /// Drops the connection when the FIN has been retransmitted without an answer.
        public var retransmitFinDrop: Bool {
            get { value(\.retransmitFinDrop) }
            set { update(\.retransmitFinDrop, newValue) }
        }

        /// Acknowledges every segment instead of stretching (delaying and combining) ACKs.
        public var disableAckStretching: Bool {
            get { value(\.disableAckStretching) }
            set { update(\.disableAckStretching, newValue) }
        }

        /// Uses TCP Fast Open; data only goes out in the SYN when the parameters allow fast open
        /// and the first send is marked idempotent.
        public var enableFastOpen: Bool {
            get { value(\.enableFastOpen) }
            set { update(\.enableFastOpen, newValue) }
        }

        /// Turns off Explicit Congestion Notification for this connection.
        public var disableECN: Bool {
            get { value(\.disableECN) }
            set { update(\.disableECN, newValue) }
        }

        /// A snapshot of the current settings, for the engine's socket-option plan.
        package var socketSettings: TCPSocketSettings {
            settings.withLock { $0 }
        }

        /// An independent copy of these options.
        package override func copyOptions() -> NWProtocolOptions {
            Options(settings: socketSettings)
        }
    }

    /// Facts about an established TCP connection.
    public final class Metadata: NWProtocolMetadata, @unchecked Sendable {
        private struct Pacing {
            var rate: UInt64?
            var handler: (@Sendable (UInt64?) -> Void)?
        }

        private let pacing: Lock<Pacing>

        /// Bytes received and waiting to be read, when the metadata was taken.
        public let availableReceiveBuffer: UInt32

        /// Bytes queued for sending and not yet acknowledged, when the metadata was taken.
        public let availableSendBuffer: UInt32

        /// Creates metadata from the engine's reading of the socket. `pacingRateHandler`, when
        /// given, is called with every value passed to
        /// ``setMaximumPacingRateBytesPerSecond(_:)`` so the engine can apply it.
        package init(
            availableReceiveBuffer: UInt32,
            availableSendBuffer: UInt32,
            pacingRateHandler: (@Sendable (UInt64?) -> Void)? = nil
        ) {
            self.availableReceiveBuffer = availableReceiveBuffer
            self.availableSendBuffer = availableSendBuffer
            self.pacing = Lock(Pacing(rate: nil, handler: pacingRateHandler))
            super.init(definition: NWProtocolTCP.definition)
        }

        /// Caps the rate at which the connection sends, in bytes per second; nil removes the cap.
        /// (On Linux this corresponds to the `SO_MAX_PACING_RATE` socket option.)
        public func setMaximumPacingRateBytesPerSecond(_ maximumPacingRateBytesPerSecond: UInt64?) {
            let handler = pacing.withLock { state -> (@Sendable (UInt64?) -> Void)? in
                state.rate = maximumPacingRateBytesPerSecond
                return state.handler
            }
            handler?(maximumPacingRateBytesPerSecond)
        }

        /// The last pacing rate set through ``setMaximumPacingRateBytesPerSecond(_:)``.
        package var maximumPacingRateBytesPerSecond: UInt64? {
            pacing.withLock { $0.rate }
        }
    }
}
