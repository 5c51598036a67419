import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension NWEndpoint {
    /// A TCP or UDP port number.
    public struct Port: CustomDebugStringConvertible, Equatable, ExpressibleByIntegerLiteral, Hashable,
        RawRepresentable, Sendable
    {
        /// The port number in host byte order.
        public let rawValue: UInt16

        /// Port 0: a listener or local endpoint lets the system pick a free port.
        public static let any: NWEndpoint.Port = 0
        /// Port 22 (SSH).
        public static let ssh: NWEndpoint.Port = 22
        /// Port 25 (SMTP).
        public static let smtp: NWEndpoint.Port = 25
        /// Port 80 (HTTP).
        public static let http: NWEndpoint.Port = 80
        /// Port 110 (POP3).
        public static let pop: NWEndpoint.Port = 110
        /// Port 143 (IMAP).
        public static let imap: NWEndpoint.Port = 143
        /// Port 443 (HTTPS).
        public static let https: NWEndpoint.Port = 443
        /// Port 993 (IMAP over TLS).
        public static let imaps: NWEndpoint.Port = 993
        /// Port 1080 (SOCKS).
        public static let socks: NWEndpoint.Port = 1080

        /// Creates a port from a number; never fails.
        public init?(rawValue: UInt16) {
            self.rawValue = rawValue
        }

        /// Creates a port from an integer literal, as in `let port: NWEndpoint.Port = 8080`.
        public init(integerLiteral value: UInt16) {
            self.rawValue = value
        }

        /// Creates a port from a decimal number (`"8080"`) or a service name (`"https"`).
        ///
        /// Decimal strings must consist of ASCII digits only and fit in 16 bits. Names are looked
        /// up in the services database (`/etc/services` through `getservbyname_r`, TCP entries
        /// first, then UDP); when that database is missing, the names of the well-known static
        /// ports (plus `pop3` and `socks`) are still recognized. Returns nil for anything else.
        public init?(_ service: String) {
            if !service.isEmpty, service.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                guard let number = UInt16(service) else { return nil }
                self.rawValue = number
                return
            }
            guard let number = Port.lookUpService(named: service) else { return nil }
            self.rawValue = number
        }

        /// The decimal port number.
        public var debugDescription: String { String(rawValue) }

        /// Names accepted even when the system has no services database.
        private static let builtInServices: [String: UInt16] = [
            "ssh": 22, "smtp": 25, "http": 80, "www": 80, "pop3": 110, "pop": 110, "imap": 143, "imap2": 143,
            "https": 443, "imaps": 993, "socks": 1080,
        ]

        private static func lookUpService(named name: String) -> UInt16? {
            guard !name.isEmpty, !name.utf8.contains(0) else { return nil }
            for proto in ["tcp", "udp"] {
                if let port = systemServicePort(name: name, proto: proto) { return port }
            }
            return builtInServices[name.lowercased()]
        }

        private static func systemServicePort(name: String, proto: String) -> UInt16? {
            #if canImport(Glibc)
            var entry = servent()
            var result: UnsafeMutablePointer<servent>? = nil
            var buffer = [CChar](repeating: 0, count: 4096)
            let status = getservbyname_r(name, proto, &entry, &buffer, buffer.count, &result)
            guard status == 0, let found = result else { return nil }
            return UInt16(bigEndian: UInt16(truncatingIfNeeded: found.pointee.s_port))
            #else
            guard let found = getservbyname(name, proto) else { return nil }
            return UInt16(bigEndian: UInt16(truncatingIfNeeded: found.pointee.s_port))
            #endif
        }
    }
}
