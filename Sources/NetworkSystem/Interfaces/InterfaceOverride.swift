/// What an administrator or a test declares about one interface, overriding the classification.
///
/// Syntax (environment variable `NETWORK_INTERFACE_TYPES`, or one entry per line in the file named
/// by `NETWORK_INTERFACE_TYPES_FILE`):
///
///     eth0=cellular,expensive;wlan0=wifi,constrained;veth1=noexpensive
///
/// Entries are separated by `;` (or new lines); each is `name=token[,token…]` where a token is a
/// type (`loopback`, `wifi`, `cellular`, `wiredEthernet`, `other`, case-insensitive) or a flag
/// (`expensive`, `noexpensive`, `constrained`, `noconstrained`). `#` starts a comment. Unknown
/// tokens are ignored and reported in `InterfaceOverride.Parsed.problems`. A later entry for the
/// same name overrides an earlier one field by field.
package struct InterfaceOverride: Sendable, Hashable {
    package var type: SystemInterfaceType?
    package var isExpensive: Bool?
    package var isConstrained: Bool?

    package init(type: SystemInterfaceType? = nil, isExpensive: Bool? = nil, isConstrained: Bool? = nil) {
        self.type = type
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
    }

    /// The result of parsing: overrides by interface name, and what was not understood.
    package struct Parsed: Sendable, Equatable {
        package var overrides: [String: InterfaceOverride] = [:]
        package var problems: [String] = []
    }

    /// Parses the override syntax.
    package static func parse(_ text: String) -> Parsed {
        var result = Parsed()
        let entries = text.split(whereSeparator: { $0 == ";" || $0 == "\n" })
        for rawEntry in entries {
            var entry = Substring(rawEntry)
            if let hash = entry.firstIndex(of: "#") { entry = entry[..<hash] }
            let trimmed = String(entry).trimmingWhitespace
            if trimmed.isEmpty { continue }
            guard let eq = trimmed.firstIndex(of: "=") else {
                result.problems.append("missing '=' in \"\(trimmed)\"")
                continue
            }
            let name = String(trimmed[..<eq]).trimmingWhitespace
            guard !name.isEmpty else {
                result.problems.append("missing interface name in \"\(trimmed)\"")
                continue
            }
            var o = result.overrides[name] ?? InterfaceOverride()
            for rawToken in trimmed[trimmed.index(after: eq)...].split(separator: ",") {
                let token = String(rawToken).trimmingWhitespace
                if token.isEmpty { continue }
                switch token.lowercased() {
                case "expensive": o.isExpensive = true
                case "noexpensive", "inexpensive", "!expensive": o.isExpensive = false
                case "constrained": o.isConstrained = true
                case "noconstrained", "unconstrained", "!constrained": o.isConstrained = false
                default:
                    if let t = SystemInterfaceType(overrideName: token) {
                        o.type = t
                    } else {
                        result.problems.append("unknown token \"\(token)\" for \(name)")
                    }
                }
            }
            result.overrides[name] = o
        }
        return result
    }
}
