import Foundation
import NetworkSync

extension NWParameters {
    /// A scope for privacy-sensitive state: connections whose parameters share a context share
    /// its DNS cache, logging choice, encrypted-resolver requirement and proxies.
    ///
    /// Attach one with ``NWParameters/setPrivacyContext(_:)``. Contexts are reference types and
    /// may be used from any thread.
    public final class PrivacyContext: CustomDebugStringConvertible, Sendable {

        /// An encrypted DNS resolver to use when the system has none.
        public enum ResolverConfiguration: CustomDebugStringConvertible, Sendable {
            /// DNS over HTTPS at the given URL; the server addresses, when given, spare resolving
            /// the URL's host.
            case https(URL, serverAddresses: [NWEndpoint])
            /// DNS over TLS at the given endpoint; the server addresses, when given, spare
            /// resolving the endpoint's host.
            case tls(NWEndpoint, serverAddresses: [NWEndpoint])

            /// The resolver's kind, location and any server addresses.
            public var debugDescription: String {
                switch self {
                case .https(let url, let addresses):
                    return "DoH \(url.absoluteString)" + ResolverConfiguration.describe(addresses)
                case .tls(let endpoint, let addresses):
                    return "DoT \(endpoint.debugDescription)" + ResolverConfiguration.describe(addresses)
                }
            }

            private static func describe(_ addresses: [NWEndpoint]) -> String {
                addresses.isEmpty ? "" : " (" + addresses.map(\.debugDescription).joined(separator: ", ") + ")"
            }
        }

        private struct State {
            var loggingDisabled = false
            var cacheGeneration: UInt64 = 0
            var requiresEncryptedNameResolution = false
            var fallbackResolver: ResolverConfiguration?
            var proxyConfigurations: [ProxyConfiguration] = []
        }

        private let contextDescription: String
        private let state = Lock(State())

        /// The context used by parameters that were given no other.
        public static let `default` = PrivacyContext(description: "default")

        /// Creates a new context; `description` names it in descriptions and logs.
        public init(description: String) {
            self.contextDescription = description
        }

        /// Stops the framework from logging details (such as host names) of connections in this
        /// context.
        public func disableLogging() {
            state.withLock { $0.loggingDisabled = true }
        }

        /// Drops cached state of this context, such as DNS answers, so later connections start
        /// fresh.
        public func flushCache() {
            state.withLock { $0.cacheGeneration &+= 1 }
        }

        /// Requires that name resolution in this context be encrypted (DNS over HTTPS or TLS).
        /// When the system has no encrypted resolver, `fallbackResolver` is used; with neither,
        /// resolution fails.
        public func requireEncryptedNameResolution(
            _ requireEncryption: Bool,
            fallbackResolver: NWParameters.PrivacyContext.ResolverConfiguration?
        ) {
            state.withLock {
                $0.requiresEncryptedNameResolution = requireEncryption
                $0.fallbackResolver = fallbackResolver
            }
        }

        /// The proxies connections in this context go through, tried in order.
        public var proxyConfigurations: [ProxyConfiguration] {
            get { state.withLock { $0.proxyConfigurations } }
            set { state.withLock { $0.proxyConfigurations = newValue } }
        }

        /// The context's name.
        public var debugDescription: String { contextDescription }

        /// Whether ``disableLogging()`` was called.
        package var isLoggingDisabled: Bool { state.withLock { $0.loggingDisabled } }

        /// Incremented by every ``flushCache()``; caches keyed by context drop entries stored
        /// under an older generation.
        package var cacheGeneration: UInt64 { state.withLock { $0.cacheGeneration } }

        /// Whether encrypted name resolution is required.
        package var requiresEncryptedNameResolution: Bool {
            state.withLock { $0.requiresEncryptedNameResolution }
        }

        /// The fallback resolver given to ``requireEncryptedNameResolution(_:fallbackResolver:)``.
        package var fallbackResolver: ResolverConfiguration? { state.withLock { $0.fallbackResolver } }
    }
}
