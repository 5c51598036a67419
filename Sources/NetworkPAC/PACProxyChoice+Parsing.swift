extension PACProxyChoice {
    /// Turns a `FindProxyForURL` answer into the ordered choices it names.
    ///
    /// Scripts in the wild are sloppy, so parsing forgives what browsers forgive: any mix of
    /// spaces and tabs, keywords in any case, empty entries (`";;"`), a trailing `;`. An entry
    /// that cannot be understood (unknown keyword, missing or bad host, port out of range) is
    /// skipped rather than failing the whole answer, because the remaining entries are still the
    /// script's wishes. When nothing usable is left, the answer is `[.direct]`: a broken script
    /// must not cut the machine off the network (browsers do the same).
    ///
    /// Keywords: `DIRECT`; `PROXY` and `HTTP` → `.httpConnect`; `HTTPS` → `.httpsConnect`;
    /// `SOCKS5` and `SOCKS` → `.socks5`; `SOCKS4` → `.socks4`. A missing port takes the
    /// scheme's usual one (80, 443, 1080).
    package static func parse(_ answer: String) -> [PACProxyChoice] {
        var choices: [PACProxyChoice] = []
        for entry in answer.split(separator: ";") {
            guard let choice = parseEntry(entry) else { continue }
            // A repeated entry adds nothing but a second identical attempt.
            if !choices.contains(choice) { choices.append(choice) }
        }
        return choices.isEmpty ? [.direct] : choices
    }

    private static func parseEntry(_ entry: Substring) -> PACProxyChoice? {
        // "\r\n" is a Character of its own, equal to neither "\r" nor "\n".
        let words = entry.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" })
        guard let keyword = words.first?.uppercased() else { return nil }
        if keyword == "DIRECT" { return words.count == 1 ? .direct : nil }
        guard words.count == 2 else { return nil }
        let defaultPort: Int
        switch keyword {
        case "PROXY", "HTTP": defaultPort = 80
        case "HTTPS": defaultPort = 443
        case "SOCKS", "SOCKS5", "SOCKS4": defaultPort = 1080
        default: return nil
        }
        guard let (host, port) = parseHostPort(words[1], defaultPort: defaultPort) else { return nil }
        switch keyword {
        case "PROXY", "HTTP": return .httpConnect(host: host, port: port)
        case "HTTPS": return .httpsConnect(host: host, port: port)
        case "SOCKS4": return .socks4(host: host, port: port)
        default: return .socks5(host: host, port: port)
        }
    }

    /// Splits `host:port`, `[v6]:port`, `host` or `[v6]`. A bare IPv6 address without brackets is
    /// refused: its last group could be a port or part of the address, and guessing would send
    /// traffic to the wrong place.
    static func parseHostPort(_ text: Substring, defaultPort: Int) -> (String, Int)? {
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
            guard host.contains(":") else { return nil }
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return nil }
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
        }
        guard !host.isEmpty, host.allSatisfy({ isHostCharacter($0) }) else { return nil }
        var port = defaultPort
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let value = Int(portText), (1...65535).contains(value)
            else { return nil }
            port = value
        }
        return (String(host), port)
    }

    private static func isHostCharacter(_ c: Character) -> Bool {
        guard c.isASCII else { return false }
        return c.isLetter || c.isNumber || c == "." || c == "-" || c == "_" || c == ":" || c == "%"
    }
}
