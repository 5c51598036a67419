import Logging

/// The engine's loggers, one per subsystem, shared by every module of the package (this is the
/// lowest module that links swift-log, so the others reach them from here).
///
/// Each is made on first use, so an application that calls `LoggingSystem.bootstrap` before it
/// opens its first connection gets its own handler. When `NETWORK_LOG` is set they use
/// ``NetworkLogHandler`` instead (see ``NetworkLogSettings``). Everything the engine says is
/// `.debug` or `.trace`: at swift-log's default level (`.info`) a library stays silent.
///
/// Never log payloads, credentials, pre-shared keys, private keys or PAC script bodies; host
/// names, addresses, ports, byte counts and error codes are fine.
package enum NetworkLog {
    /// A connection's life: creation, state changes, why it waits, sends and receives (counts).
    package static let connection = make("network.connection")
    /// Listeners: binding, state changes, accepted and refused peers.
    package static let listener = make("network.listener")
    /// Establishment: routes, resolved addresses, each attempt and how it ended.
    package static let establishment = make("network.establishment")
    /// The stub resolver: answers, their source and TTL, servers asked.
    package static let dns = make("network.dns")
    /// TLS and DTLS handshakes: version, cipher suite, verification verdict.
    package static let tls = make("network.tls")
    /// The path monitor: network configuration changes.
    package static let path = make("network.path")
    /// Proxy tunnels: which proxy, handshake outcome.
    package static let proxy = make("network.proxy")
    /// PAC files: loading and the answers scripts give.
    package static let pac = make("network.pac")
    /// Bonjour (mDNS / DNS-SD): sockets per interface, names claimed and lost, browses.
    package static let bonjour = make("network.bonjour")
    /// QUIC: handshakes refused, connections ended and why (codes only, never payloads).
    package static let quic = make("network.quic")

    /// Whether `connection` logs at `.trace`, decided once, at first use. The data path asks this
    /// (`traceConnection`) before each per-operation trace: asking the logger itself copies its
    /// handler and checks exclusivity on every send and receive (about 1 % of a round-trip
    /// client's profile), for messages nobody reads unless tracing was asked for.
    package static let tracesConnections = connection.logLevel <= .trace

    /// Traces `message` on `connection` when it logs at `.trace` (`tracesConnections`); builds
    /// neither the message nor its metadata otherwise. For the data path's per-operation traces.
    @inlinable
    package static func traceConnection(
        _ message: @autoclosure () -> Logger.Message, metadata: @autoclosure () -> Logger.Metadata? = nil
    ) {
        if tracesConnections { connection.trace(message(), metadata: metadata()) }
    }

    /// A logger for `label`: the environment's handler when `NETWORK_LOG` is set, else whatever
    /// the application bootstrapped.
    package static func make(_ label: String) -> Logger {
        guard let settings = NetworkLogSettings.fromEnvironment else { return Logger(label: label) }
        return Logger(label: label) { label in
            NetworkLogHandler(label: label, level: settings.level, sink: settings.sink)
        }
    }
}
