/// Builds a protocol stack from the closure that writes it, the top protocol first:
/// `TLV { TLS() }` is TLV over TLS (over TCP over IP, which need not be written).
@resultBuilder
public struct ProtocolStackBuilder<ApplicationProtocol: NetworkProtocolOptions, each P: NetworkProtocolOptions> {
    /// The stack's top protocol, and any further values the closure lists.
    public static func buildBlock(
        _ applicationProtocol: ApplicationProtocol, _ protocols: repeat each P
    ) -> (ApplicationProtocol, repeat each P) {
        (applicationProtocol, repeat each protocols)
    }
}
