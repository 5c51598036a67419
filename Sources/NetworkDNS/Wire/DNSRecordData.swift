/// The decoded RDATA of a record. Types the resolver does not interpret stay `.raw`, so a
/// message decodes and re-encodes without loss (RFC 3597).
package enum DNSRecordData: Hashable, Sendable {
    /// A: one IPv4 address.
    case a(DNSIPv4Address)
    /// AAAA: one IPv6 address.
    case aaaa(DNSIPv6Address)
    /// CNAME: the canonical name this owner is an alias of.
    case cname(DNSName)
    /// NS: a name server of the zone.
    case ns(DNSName)
    /// PTR: the name an address (or DNS-SD service type) points to.
    case ptr(DNSName)
    /// SRV: a service's host and port.
    case srv(DNSServiceRecord)
    /// The character-strings, each at most 255 octets.
    case txt([[UInt8]])
    /// SVCB (64) and HTTPS (65) share one layout.
    case serviceBinding(DNSServiceBinding)
    /// SOA: the zone's parameters (the resolver reads only the negative TTL).
    case soa(DNSStartOfAuthority)
    /// OPT (RFC 6891): the options, raw (code, value) pairs.
    case opt([DNSEDNSOption])
    /// Anything else, byte for byte.
    case raw([UInt8])

    /// Decodes `length` octets at the reader's offset as RDATA of `type`; the reader ends just
    /// past the RDATA whatever the type, and the content must fill it exactly.
    static func decode(type: DNSRecordType, length: Int, from reader: inout DNSReader) throws(DNSWireError) -> DNSRecordData {
        guard reader.remaining >= length else { throw .truncated(offset: reader.offset) }
        let end = reader.offset + length
        let outerLimit = reader.limit
        reader.limit = end
        defer { reader.limit = outerLimit }
        let malformed = DNSWireError.malformedRecordData(type: type.rawValue)
        let data: DNSRecordData
        switch type {
        case .a:
            guard length == 4 else { throw malformed }
            data = .a(DNSIPv4Address(rawValue: try reader.readUInt32()))
        case .aaaa:
            guard length == 16, let address = DNSIPv6Address(octets: try reader.readBytes(16)) else { throw malformed }
            data = .aaaa(address)
        case .cname: data = .cname(try reader.readName())
        case .ns: data = .ns(try reader.readName())
        case .ptr: data = .ptr(try reader.readName())
        case .srv:
            let priority = try reader.readUInt16()
            let weight = try reader.readUInt16()
            let port = try reader.readUInt16()
            data = .srv(DNSServiceRecord(priority: priority, weight: weight, port: port, target: try reader.readName()))
        case .txt:
            var strings: [[UInt8]] = []
            while reader.offset < end {
                let count = Int(try reader.readUInt8())
                strings.append(try reader.readBytes(count))
            }
            data = .txt(strings)
        case .svcb, .https:
            let priority = try reader.readUInt16()
            let target = try reader.readName()
            var parameters: [DNSServiceBinding.Parameter] = []
            while reader.offset < end {
                let key = try reader.readUInt16()
                let count = Int(try reader.readUInt16())
                parameters.append(try DNSServiceBinding.decodeParameter(key: key, value: try reader.readBytes(count)))
            }
            data = .serviceBinding(DNSServiceBinding(priority: priority, targetName: target, parameters: parameters))
        case .soa:
            let primary = try reader.readName()
            let mailbox = try reader.readName()
            data = .soa(
                DNSStartOfAuthority(
                    primaryServer: primary, responsibleMailbox: mailbox, serial: try reader.readUInt32(),
                    refresh: try reader.readUInt32(), retry: try reader.readUInt32(), expire: try reader.readUInt32(),
                    minimum: try reader.readUInt32()))
        case .opt:
            var options: [DNSEDNSOption] = []
            while reader.offset < end {
                let code = try reader.readUInt16()
                let count = Int(try reader.readUInt16())
                options.append(DNSEDNSOption(code: code, value: try reader.readBytes(count)))
            }
            data = .opt(options)
        default:
            data = .raw(try reader.readBytes(length))
        }
        guard reader.offset == end else { throw malformed }
        return data
    }

    /// Appends the RDATA (without its length). Only RFC 1035 types get compressed names.
    func encode(into writer: inout DNSWriter) {
        switch self {
        case .a(let address): writer.write(address.rawValue)
        case .aaaa(let address): writer.write(bytes: address.octets)
        case .cname(let name), .ns(let name), .ptr(let name): writer.write(name: name, compress: true)
        case .srv(let record):
            writer.write(record.priority)
            writer.write(record.weight)
            writer.write(record.port)
            writer.write(name: record.target, compress: false)
        case .txt(let strings):
            for string in strings {
                let bounded = string.prefix(255)
                writer.write(UInt8(bounded.count))
                writer.write(bytes: Array(bounded))
            }
        case .serviceBinding(let binding):
            writer.write(binding.priority)
            writer.write(name: binding.targetName, compress: false)
            for parameter in binding.parameters {
                let value = DNSServiceBinding.encodeValue(parameter)
                writer.write(parameter.key)
                writer.write(UInt16(truncatingIfNeeded: value.count))
                writer.write(bytes: value)
            }
        case .soa(let soa):
            writer.write(name: soa.primaryServer, compress: true)
            writer.write(name: soa.responsibleMailbox, compress: true)
            writer.write(soa.serial)
            writer.write(soa.refresh)
            writer.write(soa.retry)
            writer.write(soa.expire)
            writer.write(soa.minimum)
        case .opt(let options):
            for option in options {
                writer.write(option.code)
                writer.write(UInt16(truncatingIfNeeded: option.value.count))
                writer.write(bytes: option.value)
            }
        case .raw(let bytes): writer.write(bytes: bytes)
        }
    }
}

/// One EDNS(0) option inside an OPT record, kept raw.
package struct DNSEDNSOption: Hashable, Sendable {
    /// The option code (e.g. 10 for cookies).
    package var code: UInt16
    /// The option's bytes.
    package var value: [UInt8]

    /// An option from its code and bytes.
    package init(code: UInt16, value: [UInt8]) {
        self.code = code
        self.value = value
    }
}
