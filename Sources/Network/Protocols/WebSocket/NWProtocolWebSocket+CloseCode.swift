extension NWProtocolWebSocket {
    /// The status code of a close message: one the protocol defines, or one of an application's
    /// (3000–3999, registered with IANA) or a private one (4000–4999).
    public enum CloseCode: Equatable, Sendable {
        /// A code RFC 6455 defines (1000–1011, 1015).
        case protocolCode(NWProtocolWebSocket.CloseCode.Defined)
        /// A code in 3000–3999.
        case applicationCode(UInt16)
        /// A code in 4000–4999.
        case privateCode(UInt16)

        /// The close code for `rawValue`; nil for a number no case covers.
        public init?(rawValue: UInt16) {
            switch rawValue {
            case 3000...3999: self = .applicationCode(rawValue)
            case 4000...4999: self = .privateCode(rawValue)
            default:
                guard let defined = Defined(rawValue: rawValue) else { return nil }
                self = .protocolCode(defined)
            }
        }

        /// The number sent on the wire.
        public var rawValue: UInt16 {
            switch self {
            case .protocolCode(let defined): return defined.rawValue
            case .applicationCode(let code), .privateCode(let code): return code
            }
        }
    }
}
