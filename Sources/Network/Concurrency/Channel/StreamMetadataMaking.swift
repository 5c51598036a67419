/// The metadata of a stream protocol (TCP, TLS), made from what a receive gave.
protocol StreamMetadataMaking: NetworkMetadataProtocol {
    init(endOfStream: Bool, other: [NWProtocolMetadata])
}

extension TCP.Metadata: StreamMetadataMaking {}
extension TLS.Metadata: StreamMetadataMaking {}
