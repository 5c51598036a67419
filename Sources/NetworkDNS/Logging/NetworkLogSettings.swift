#if canImport(Glibc)
import Glibc
#endif
import Logging

/// The environment's logging switch, read once per process: `NETWORK_LOG=debug` (or `trace`,
/// or any swift-log level name) makes the engine's loggers write at that level to standard
/// error, or to the file `NETWORK_LOG_FILE` names, whatever the application bootstrapped. It
/// exists for programs that cannot be edited (and for tests), as `log stream` does on Apple
/// platforms. Unset, empty, `0` or `off`: the application's bootstrap decides.
package struct NetworkLogSettings: Sendable {
    /// The level the engine's loggers start at.
    package var level: Logger.Level
    /// Where lines go.
    package var sink: NetworkLogSink

    /// The settings the environment asks for, or nil when it asks for nothing.
    package static let fromEnvironment: NetworkLogSettings? = parse(
        level: getenv("NETWORK_LOG").map { String(cString: $0) },
        file: getenv("NETWORK_LOG_FILE").map { String(cString: $0) })

    /// Interprets the two variables' values (nil when unset).
    package static func parse(level text: String?, file: String?) -> NetworkLogSettings? {
        guard let text else { return nil }
        let word = text.lowercased()
        if word.isEmpty || word == "0" || word == "off" || word == "none" { return nil }
        // Any other value (such as `1`) means the useful default: the connection stories.
        let level = Logger.Level(rawValue: word) ?? .debug
        let sink: NetworkLogSink
        if let file, !file.isEmpty, let opened = NetworkLogSink(appendingTo: file) {
            sink = opened
        } else {
            sink = .standardError
        }
        return NetworkLogSettings(level: level, sink: sink)
    }
}
