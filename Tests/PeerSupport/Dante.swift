/// dante (`danted`), a real SOCKS5 proxy: its configuration, shared by the proxy tests on the
/// host's loopback and the end-to-end tests in network namespaces.
public enum Dante {
    /// A configuration that listens on `address`:`port`, leaves through `external`, and allows
    /// CONNECT from anyone, with or without RFC 1929 user/password (checked against the system's
    /// accounts). `logConnections` also logs each connection (the end-to-end tests read it).
    public static func configuration(
        logFile: String, address: String, port: Int, external: String, usernameAuthentication: Bool,
        logConnections: Bool = false
    ) -> String {
        """
        logoutput: \(logFile)
        internal: \(address) port = \(port)
        external: \(external)
        clientmethod: none
        socksmethod: \(usernameAuthentication ? "username" : "none")
        user.privileged: root
        user.unprivileged: nobody
        client pass {
          from: 0/0 to: 0/0
          log: error
        }
        socks pass {
          from: 0/0 to: 0/0
          command: connect
          log: error\(logConnections ? " connect" : "")
        }

        """
    }
}
