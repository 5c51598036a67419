import Logging

/// nwcat is an application, so it may choose where swift-log's output goes: with `-v` the
/// engine's loggers write to standard error at debug level, with `-vv` at trace. Without `-v`
/// nothing is bootstrapped and the engine stays silent (it logs below swift-log's default
/// level). `NETWORK_LOG`, when set, takes precedence inside the engine.
enum LogSetup {
    static func bootstrap(verbosity: Int) {
        guard verbosity > 0 else { return }
        let level: Logger.Level = verbosity > 1 ? .trace : .debug
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
