import NIOCore

/// The address lookup of a connection to a Bonjour service (`NWEndpoint.service`): the
/// service's SRV record gives its host and port, the host's address records its addresses,
/// all by mDNS (`MDNSEngine.resolve`); the race then runs as for any host. The host string and
/// port the establishment passes are only for its logs: the service carries its own.
package struct MDNSServiceLookup: AddressLookup {
    package let instance: String
    package let type: String
    package let domain: String
    package let interfaceName: String?

    package init(instance: String, type: String, domain: String, interfaceName: String?) {
        self.instance = instance
        self.type = type
        self.domain = domain
        self.interfaceName = interfaceName
    }

    package func start(_ host: String, port: Int, sink: AddressLookupSink) -> RunningAddressLookup {
        let token = MDNSEngine.shared.resolve(instance: instance, type: type, domain: domain, interfaceName: interfaceName) { result in
            switch result {
            case .success(let addresses):
                sink.answered(.ipv6, addresses.filter { $0.protocol == .inet6 })
                sink.answered(.ipv4, addresses.filter { $0.protocol == .inet })
                sink.finished()
            case .failure(let error):
                sink.failed(error)
            }
        }
        guard let token else {
            sink.failed(.dns(DNSServiceCode.badParam))
            return .finished
        }
        return RunningAddressLookup { MDNSEngine.shared.stopResolving(token) }
    }
}
