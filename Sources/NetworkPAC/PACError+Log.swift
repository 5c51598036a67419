extension PACError {
    /// The error for a log line. Texts that come from the script itself (its exceptions, the
    /// engine's complaints about it) are left out: a script may put anything in them. URLs lose
    /// any user name and password.
    package var logDescription: String {
        switch self {
        case .scriptError: return "PAC script error (its message is not logged)"
        case .evaluationFailed: return "FindProxyForURL failed (its message is not logged)"
        case .engineFailure: return "PAC engine failure (its message is not logged)"
        case .unusable: return "PAC evaluator is unusable"
        case .loadFailed(let why): return "PAC script could not be loaded: \(Self.redactingUserInfo(why))"
        default: return description
        }
    }

    /// `text` with the `user:password@` part of every `scheme://user:password@host` removed.
    static func redactingUserInfo(_ text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let scheme = rest.range(of: "://") {
            result += rest[..<scheme.upperBound]
            rest = rest[scheme.upperBound...]
            // The authority ends at the first '/', '?', '#' or space; its user part at its last '@'.
            let end = rest.firstIndex(where: { "/?# ".contains($0) }) ?? rest.endIndex
            if let at = rest[..<end].lastIndex(of: "@") {
                rest = rest[rest.index(after: at)...]
            }
        }
        return result + rest
    }
}
