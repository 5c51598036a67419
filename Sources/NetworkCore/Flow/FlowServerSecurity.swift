import NIOCore
import NIOSSL

/// The security layer a listener set up for an accepted TCP connection: its TLS server handler,
/// whose handshake runs when the flow is started, and how long that handshake may take. (A DTLS
/// peer's session belongs to its transport, `SharedDatagramPeer`.) Boxed (`indirect`) so that
/// the one optional field for both kinds stays a pointer in every flow, TLS or not.
indirect enum FlowServerSecurity {
    case tls(NIOSSLServerHandler, handshakeTimeout: TimeAmount)
    /// TLS over TCP run by GnuTLS (pre-shared keys); its handshake began at adoption.
    case gnuTLS(GnuTLSStreamHandler, handshakeTimeout: TimeAmount)

    /// How long an inbound handshake may take when the listener's TCP options set no
    /// `connectionTimeout`: 75 s, the connection-establishment timeout of Apple's TCP
    /// (`net.inet.tcp.keepinit`), so a peer that sends a partial ClientHello (or nothing) and
    /// goes silent holds its socket that long at most.
    static let defaultHandshakeTimeout: TimeAmount = .seconds(75)

    /// The handshake timeout for a listener whose TCP options say `connectionTimeout` seconds
    /// (0: the default).
    static func handshakeTimeout(connectionTimeout: Int) -> TimeAmount {
        connectionTimeout > 0 ? .seconds(Int64(connectionTimeout)) : defaultHandshakeTimeout
    }
}
