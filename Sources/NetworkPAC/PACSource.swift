/// Where a PAC script comes from.
///
/// The value doubles as the cache key of `PACEvaluatorCache`, so two flows configured with the
/// same PAC location share one loaded script.
package enum PACSource: Hashable, Sendable, CustomStringConvertible {
    /// A file on this machine.
    case file(path: String)
    /// An `http://` or `file://` URL, as `ProxyConfiguration(proxyAutoConfigurationURL:)` gives it.
    case url(String)
    /// The script text itself (tests, and configurations that embed the script).
    case script(String)

    /// The location for reports; an inline script shows only its size. (`logDescription` also
    /// hides a URL's password.)
    package var description: String {
        switch self {
        case .file(let path): return "file \(path)"
        case .url(let url): return url
        case .script(let text): return "inline script (\(text.utf8.count) bytes)"
        }
    }
}
