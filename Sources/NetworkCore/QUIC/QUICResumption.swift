import CNGTCP2
import NIOCore

/// What a client keeps of a QUIC session to resume it later: the server's ticket (GnuTLS's
/// session data), the server's transport parameters that 0-RTT data must respect (RFC 9000,
/// 7.4.1), and the certificate chain the original handshake proved, which the resuming
/// connection judges by its own rules (a resumed handshake carries no certificate).
package struct QUICResumption: Sendable {
    package var ticket: [UInt8]
    package var parameters: Parameters
    package var chain: [[UInt8]]
    /// Until when the ticket is offered (a server states a lifetime of at most 7 days; the
    /// cache keeps tickets for less).
    package var expires: NIODeadline

    /// The remembered transport parameters (RFC 9000, 7.4.1 lists which).
    package struct Parameters: Sendable, Equatable {
        package var maxData: UInt64 = 0
        package var maxStreamDataBidirectionalLocal: UInt64 = 0
        package var maxStreamDataBidirectionalRemote: UInt64 = 0
        package var maxStreamDataUnidirectional: UInt64 = 0
        package var maxStreamsBidirectional: UInt64 = 0
        package var maxStreamsUnidirectional: UInt64 = 0
        package var activeConnectionIDLimit: UInt64 = 2
        package var maxDatagramFrameSize: UInt64 = 0

        package init() {}

        init(_ remote: ngtcp2_transport_params) {
            maxData = remote.initial_max_data
            maxStreamDataBidirectionalLocal = remote.initial_max_stream_data_bidi_local
            maxStreamDataBidirectionalRemote = remote.initial_max_stream_data_bidi_remote
            maxStreamDataUnidirectional = remote.initial_max_stream_data_uni
            maxStreamsBidirectional = remote.initial_max_streams_bidi
            maxStreamsUnidirectional = remote.initial_max_streams_uni
            activeConnectionIDLimit = remote.active_connection_id_limit
            maxDatagramFrameSize = remote.max_datagram_frame_size
        }

        /// ngtcp2's form, for `ngtcp2_conn_set_early_remote_transport_params`.
        var transportParameters: ngtcp2_transport_params {
            var parameters = ngtcp2_transport_params()
            cngtcp2_transport_params_default(&parameters)
            parameters.initial_max_data = maxData
            parameters.initial_max_stream_data_bidi_local = maxStreamDataBidirectionalLocal
            parameters.initial_max_stream_data_bidi_remote = maxStreamDataBidirectionalRemote
            parameters.initial_max_stream_data_uni = maxStreamDataUnidirectional
            parameters.initial_max_streams_bidi = maxStreamsBidirectional
            parameters.initial_max_streams_uni = maxStreamsUnidirectional
            parameters.active_connection_id_limit = activeConnectionIDLimit
            parameters.max_datagram_frame_size = maxDatagramFrameSize
            return parameters
        }
    }

    package init(ticket: [UInt8], parameters: Parameters, chain: [[UInt8]], expires: NIODeadline) {
        self.ticket = ticket
        self.parameters = parameters
        self.chain = chain
        self.expires = expires
    }
}
