import Foundation
import NetworkCore

extension NWListener {
    /// Where a listener is in its life cycle.
    public enum State: Equatable, Sendable {
        /// Created, not started.
        case setup
        /// Cannot listen now; it tries again when the network changes.
        case waiting(NWError)
        /// Bound and accepting.
        case ready
        /// Could not listen (for example the port is in use: `EADDRINUSE`).
        case failed(NWError)
        /// Cancelled; always the last state.
        case cancelled

        init(_ state: FlowListenerState) {
            switch state {
            case .setup: self = .setup
            case .waiting(let error): self = .waiting(NWError(error))
            case .ready: self = .ready
            case .failed(let error): self = .failed(NWError(error))
            case .cancelled: self = .cancelled
            }
        }
    }

    /// A change in the registration of the advertised service.
    public enum ServiceRegistrationChange: Sendable {
        /// The service was registered under this endpoint.
        case add(NWEndpoint)
        /// The service registered under this endpoint went away.
        case remove(NWEndpoint)
    }

    /// A Bonjour service a listener advertises.
    public struct Service: CustomDebugStringConvertible, Equatable, Sendable {
        /// The instance name; nil lets the system use the host name.
        public let name: String?
        /// The service type, such as `_http._tcp`.
        public let type: String
        /// The domain; nil means the default domains.
        public let domain: String?
        /// The TXT record in wire format.
        public let txtRecord: Data?
        /// Whether to fail instead of renaming when the name is taken.
        public var noAutoRename: Bool = false

        /// The TXT record as key/value pairs: the one set here, else `txtRecord` read as one.
        /// What a listener advertises is this record.
        public var txtRecordObject: NWTXTRecord? {
            get { storedTXTRecordObject ?? txtRecord.map(NWTXTRecord.init) }
            set { storedTXTRecordObject = newValue }
        }
        private var storedTXTRecordObject: NWTXTRecord?

        /// Describes a service by name, type, domain and an optional wire-format TXT record.
        public init(name: String? = nil, type: String, domain: String? = nil, txtRecord: Data? = nil) {
            self.name = name
            self.type = type
            self.domain = domain
            self.txtRecord = txtRecord
        }

        /// Describes a service by name, type, domain and a TXT record of key/value pairs
        /// (`txtRecord` then holds its wire format).
        public init(name: String? = nil, type: String, domain: String? = nil, txtRecord: NWTXTRecord) {
            self.init(name: name, type: type, domain: domain, txtRecord: txtRecord.data)
            storedTXTRecordObject = txtRecord
        }

        /// `name.type.domain`, with the parts that are set.
        public var debugDescription: String {
            [name, type, domain].compactMap { $0 }.joined(separator: ".")
        }
    }
}
