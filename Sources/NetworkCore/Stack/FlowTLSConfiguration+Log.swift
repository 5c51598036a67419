extension FlowTLSConfiguration {
    /// How the peer is authenticated under these settings, for log lines (never the keys).
    func verificationLogText(server: Bool) -> String {
        if verify != nil && (!server || peerAuthenticationRequired == true) { return "verify block" }
        if !preSharedKeys.isEmpty { return "pre-shared key" }
        if server && asksOptionalClientCertificate {
            return verify != nil ? "client certificate asked, checked by the verify block if presented" : "client certificate asked, checked if presented"
        }
        if server { return peerAuthenticationRequired == true ? "client certificate required" : "no client certificate asked" }
        if peerAuthenticationRequired == false { return "none (peer authentication off)" }
        return "system trust store and host name"
    }
}
