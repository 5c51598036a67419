import NetworkCore

/// The values of parameters that say no more than a transport's and IP's socket settings: no
/// protocol above the transport and every other preference at its default (what `.tcp`, `.udp`
/// and `NWParameters(tls: nil, tcp: options)` make). Two such parameters with equal keys work
/// the same way, so connections can share one copy of them (`SharedParameters`).
struct PlainParametersKey: Equatable, Sendable {
    /// The transport's settings.
    enum Transport: Equatable, Sendable {
        case tcp(TCPSocketSettings)
        case udp(UDPSocketSettings)
    }

    let transport: Transport
    let ip: IPSocketSettings

    /// The key of `parameters`, or nil when they say more than socket settings.
    init?(_ parameters: NWParameters) {
        let stack = parameters.defaultProtocolStack
        guard stack.applicationProtocols.isEmpty, parameters.hasDefaultPreferences else { return nil }
        switch stack.transportProtocol {
        case let tcp as NWProtocolTCP.Options: transport = .tcp(tcp.socketSettings)
        case let udp as NWProtocolUDP.Options: transport = .udp(udp.socketSettings)
        default: return nil
        }
        ip = stack.ipOptions.socketSettings
    }
}
