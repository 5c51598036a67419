import NetworkPAC

extension PACConfiguration {
    /// What the establishment loads PAC scripts with: the default limits and host services, and
    /// the engine's TLS for `https://` scripts.
    static var engine: PACConfiguration {
        var configuration = PACConfiguration()
        configuration.tls = EnginePACTLSClient()
        return configuration
    }
}
