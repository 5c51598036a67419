/// TLS settings for the connection to an HTTPS proxy itself (the destination's own TLS, if
/// any, runs inside the tunnel with the flow's settings). A reference, so that proxy
/// descriptions stay `Equatable`: two are equal when they share the same settings object.
package final class ProxyTLSSettings: Sendable, Equatable {
    package let configuration: FlowTLSConfiguration

    package init(_ configuration: FlowTLSConfiguration) {
        self.configuration = configuration
    }

    package static func == (lhs: ProxyTLSSettings, rhs: ProxyTLSSettings) -> Bool {
        lhs === rhs
    }
}
