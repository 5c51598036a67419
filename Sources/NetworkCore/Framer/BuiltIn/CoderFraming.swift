/// How the 2025 API's `Coder` frames its encoded values; the engine carries them as opaque bytes
/// and the facade encodes and decodes them (Foundation's JSON or property-list coders).
///
/// - Over a stream (TCP, TLS): each value is preceded by its length, a big-endian UInt32
///   (`TLVLayout.lengthPrefixed`), run by a `TLVFramer` on the framer host.
/// - Over datagrams (UDP, DTLS): one value per datagram, as it is. A datagram already is one
///   message, so no framer runs (`framers` is empty).
package enum CoderFraming: Sendable {
    case stream
    case datagram

    /// The framing for `transport`.
    package init(transport: FlowTransportKind) {
        self = transport.isStream ? .stream : .datagram
    }

    /// What goes into `FlowConfiguration.framers` for this framing.
    package var framers: [any HostedFramerFactory] {
        switch self {
        case .stream: [TLVFramerFactory(layout: .lengthPrefixed, label: "Coder")]
        case .datagram: []
        }
    }
}
