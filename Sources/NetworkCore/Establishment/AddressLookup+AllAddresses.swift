import NIOCore
import NetworkSystem

extension AddressLookup {
    /// All addresses of `target` at once (IPv6 first), those `version` allows, for callers that
    /// need an address rather than a race: a SOCKS5 proxy that is handed an address instead of
    /// the name.
    package func allAddresses(
        of target: FlowTarget, version: IPSocketSettings.Version, on eventLoop: EventLoop
    ) -> EventLoopFuture<[SocketAddress]> {
        switch target {
        case .address(let address):
            return eventLoop.makeSucceededFuture([address])
        case .unix(let path):
            return eventLoop.makeCompletedFuture { [try SocketAddress(unixDomainSocketPath: path)] }
        case .hostPort(let host, let port, let interfaceName):
            if let literal = SocketAddress(literal: host, port: port, interfaceName: interfaceName) {
                return eventLoop.makeSucceededFuture([literal])
            }
            // The answers are gathered on the loop.
            guard eventLoop.inEventLoop else {
                return eventLoop.flatSubmit { collectAddresses(host, port: port, version: version, on: eventLoop) }
            }
            return collectAddresses(host, port: port, version: version, on: eventLoop)
        }
    }

    /// `allAddresses` for a name, on `eventLoop`.
    private func collectAddresses(
        _ host: String, port: Int, version: IPSocketSettings.Version, on eventLoop: EventLoop
    ) -> EventLoopFuture<[SocketAddress]> {
        let promise = eventLoop.makePromise(of: [SocketAddress].self)
        let found = NIOLoopBoundBox<[AddressFamily: [SocketAddress]]>([:], eventLoop: eventLoop)
        // Why a family had no answer (NXDOMAIN, SERVFAIL, …): said when no address is found.
        let familyError = NIOLoopBoundBox<FlowError?>(nil, eventLoop: eventLoop)
        _ = start(host, port: port, sink: AddressLookupSink { event in
            eventLoop.execute {
                switch event {
                case .answer(let family, let addresses, _):
                    found.value[family, default: []] += addresses
                case .familyFailed(let family, let error):
                    if version == .any || (version == .v4) == (family == .ipv4) { familyError.value = error }
                case .finished:
                    let all = (version == .v4 ? [] : found.value[.ipv6] ?? [])
                        + (version == .v6 ? [] : found.value[.ipv4] ?? [])
                    if all.isEmpty {
                        promise.fail(familyError.value ?? FlowError.dns(DNSServiceCode.noSuchRecord))
                    } else {
                        promise.succeed(all)
                    }
                case .failed(let error):
                    promise.fail(error)
                }
            }
        })
        return promise.futureResult
    }
}
