/// Why a PAC script could not be loaded or could not answer.
///
/// Every failure the establishment may see is one of these, with a message meant for logs and
/// establishment reports, so a broken proxy setup can be diagnosed without a debugger.
package enum PACError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The script could not be read (missing file, HTTP error, connection failure, bad URL).
    case loadFailed(String)
    /// The script is larger than the loader accepts.
    case scriptTooLarge(limit: Int)
    /// The script did not compile, or threw while its top level ran.
    case scriptError(String)
    /// The script has no `FindProxyForURL` (nor `FindProxyForURLEx`) function.
    case missingEntryPoint
    /// `FindProxyForURL` threw, or returned something that is not a string.
    case evaluationFailed(String)
    /// The script asked for more memory than the heap's cap allows.
    case memoryLimitExceeded(limit: Int)
    /// The script ran past the time limit. The evaluator is unusable from then on.
    case timedOut(seconds: Double)
    /// The evaluator was disabled earlier (time limit, fatal engine error); load the script again.
    case unusable(String)
    /// The JavaScript engine could not start or hit a fatal internal error.
    case engineFailure(String)

    /// The failure in one sentence, for reports; `logDescription` is the variant for log lines.
    package var description: String {
        switch self {
        case .loadFailed(let why): return "PAC script could not be loaded: \(why)"
        case .scriptTooLarge(let limit): return "PAC script is larger than \(limit) bytes"
        case .scriptError(let why): return "PAC script error: \(why)"
        case .missingEntryPoint: return "PAC script defines no FindProxyForURL function"
        case .evaluationFailed(let why): return "FindProxyForURL failed: \(why)"
        case .memoryLimitExceeded(let limit): return "PAC script exceeded its memory limit of \(limit) bytes"
        case .timedOut(let seconds): return "PAC script ran longer than \(seconds) s"
        case .unusable(let why): return "PAC evaluator is unusable: \(why)"
        case .engineFailure(let why): return "PAC engine failure: \(why)"
        }
    }
}
