extension PACSource {
    /// Where the script comes from, for a log line: never its text, nor a URL's password.
    package var logDescription: String {
        switch self {
        case .file(let path): return "file \(path)"
        case .url(let url): return PACError.redactingUserInfo(url)
        case .script(let text): return "inline script (\(text.utf8.count) bytes)"
        }
    }
}
