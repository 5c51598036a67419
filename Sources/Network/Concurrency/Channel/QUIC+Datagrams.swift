import Foundation
import NetworkCore

extension QUIC {
    /// A QUIC connection's datagrams (RFC 9221), from ``NetworkConnection/datagrams``: with
    /// ``QUICDatagram`` at its top, each send is one datagram and each receive one datagram.
    /// It is the connection itself: releasing it does not end the connection.
    public final class Datagrams<ApplicationProtocol: NetworkProtocolOptions>: NetworkChannel<ApplicationProtocol>, @unchecked Sendable {
        /// The QUIC connection whose datagrams these are.
        public let parent: NetworkConnection<QUIC>

        init(parent: NetworkConnection<QUIC>, applicationProtocol: ApplicationProtocol) {
            self.parent = parent
            super.init(core: parent.core, applicationProtocol: applicationProtocol)
        }
    }
}
