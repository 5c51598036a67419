/// SVCB/HTTPS RDATA (RFC 9460). Priority 0 is AliasMode (only `targetName` matters); any other
/// value is ServiceMode with parameters.
package struct DNSServiceBinding: Hashable, Sendable {
    /// 0 for AliasMode, otherwise lower is preferred.
    package var priority: UInt16
    /// "." means the owner name itself in ServiceMode.
    package var targetName: DNSName
    /// In wire order (RFC 9460 requires strictly increasing keys; we keep what the server sent).
    package var parameters: [Parameter]

    /// A binding from its parts.
    package init(priority: UInt16, targetName: DNSName, parameters: [Parameter] = []) {
        self.priority = priority
        self.targetName = targetName
        self.parameters = parameters
    }

    /// One SvcParam. Keys the racer uses are decoded; `ech` and unknown keys keep their bytes.
    package enum Parameter: Hashable, Sendable {
        /// Key 0: keys a client must understand to use this record.
        case mandatory([UInt16])
        /// Key 1: ALPN protocol ids.
        case alpn([[UInt8]])
        /// Key 2: the default ALPN ("http/1.1" for HTTPS) is not supported.
        case noDefaultALPN
        /// Key 3.
        case port(UInt16)
        /// Key 4.
        case ipv4Hint([DNSIPv4Address])
        /// Key 5: an ECHConfigList, passed through untouched.
        case ech([UInt8])
        /// Key 6.
        case ipv6Hint([DNSIPv6Address])
        /// Any other key, value kept raw.
        case unknown(key: UInt16, value: [UInt8])

        /// The SvcParamKey number.
        package var key: UInt16 {
            switch self {
            case .mandatory: 0
            case .alpn: 1
            case .noDefaultALPN: 2
            case .port: 3
            case .ipv4Hint: 4
            case .ech: 5
            case .ipv6Hint: 6
            case .unknown(let key, _): key
            }
        }
    }

    /// The ALPN ids as strings (lossy for non-UTF-8 ids, which no real protocol uses).
    package var alpnProtocols: [String] {
        for case .alpn(let ids) in parameters { return ids.map { String(decoding: $0, as: UTF8.self) } }
        return []
    }

    /// The `port` parameter, if any.
    package var port: UInt16? {
        for case .port(let port) in parameters { return port }
        return nil
    }

    static func decodeParameter(key: UInt16, value: [UInt8]) throws(DNSWireError) -> Parameter {
        var reader = DNSReader(value)
        switch key {
        case 0:
            guard !value.isEmpty, value.count % 2 == 0 else { throw .malformedRecordData(type: DNSRecordType.svcb.rawValue) }
            var keys: [UInt16] = []
            while reader.remaining > 0 { keys.append(try reader.readUInt16()) }
            return .mandatory(keys)
        case 1:
            var ids: [[UInt8]] = []
            while reader.remaining > 0 {
                let length = Int(try reader.readUInt8())
                guard length > 0 else { throw .malformedRecordData(type: DNSRecordType.svcb.rawValue) }
                ids.append(try reader.readBytes(length))
            }
            guard !ids.isEmpty else { throw .malformedRecordData(type: DNSRecordType.svcb.rawValue) }
            return .alpn(ids)
        case 2:
            guard value.isEmpty else { throw .malformedRecordData(type: DNSRecordType.svcb.rawValue) }
            return .noDefaultALPN
        case 3:
            guard value.count == 2 else { throw .malformedRecordData(type: DNSRecordType.svcb.rawValue) }
            return .port(try reader.readUInt16())
        case 4:
            guard !value.isEmpty, value.count % 4 == 0 else { throw .malformedRecordData(type: DNSRecordType.svcb.rawValue) }
            var addresses: [DNSIPv4Address] = []
            while reader.remaining > 0 { addresses.append(DNSIPv4Address(rawValue: try reader.readUInt32())) }
            return .ipv4Hint(addresses)
        case 5:
            return .ech(value)
        case 6:
            guard !value.isEmpty, value.count % 16 == 0 else { throw .malformedRecordData(type: DNSRecordType.svcb.rawValue) }
            var addresses: [DNSIPv6Address] = []
            while reader.remaining > 0 {
                guard let address = DNSIPv6Address(octets: try reader.readBytes(16)) else {
                    throw .malformedRecordData(type: DNSRecordType.svcb.rawValue)
                }
                addresses.append(address)
            }
            return .ipv6Hint(addresses)
        default:
            return .unknown(key: key, value: value)
        }
    }

    static func encodeValue(_ parameter: Parameter) -> [UInt8] {
        var writer = DNSWriter()
        switch parameter {
        case .mandatory(let keys): for key in keys { writer.write(key) }
        case .alpn(let ids):
            for id in ids {
                writer.write(UInt8(truncatingIfNeeded: id.count))
                writer.write(bytes: Array(id.prefix(255)))
            }
        case .noDefaultALPN: break
        case .port(let port): writer.write(port)
        case .ipv4Hint(let addresses): for address in addresses { writer.write(address.rawValue) }
        case .ech(let bytes): writer.write(bytes: bytes)
        case .ipv6Hint(let addresses): for address in addresses { writer.write(bytes: address.octets) }
        case .unknown(_, let value): writer.write(bytes: value)
        }
        return writer.bytes
    }
}
