#if canImport(Glibc)
import Glibc
#endif
import Logging

/// The handler `NETWORK_LOG` selects: one line per event,
/// `2026-01-02T03:04:05.678Z debug network.connection[4242]: connection=C1 message`: the
/// process id tells apart processes sharing one `NETWORK_LOG_FILE` (each numbers its connections
/// from C1); metadata is sorted by key so lines compare well across runs.
package struct NetworkLogHandler: LogHandler {
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let sink: NetworkLogSink

    /// A handler for `label` writing events at `level` and above to `sink`.
    package init(label: String, level: Logger.Level, sink: NetworkLogSink) {
        self.label = label
        self.logLevel = level
        self.sink = sink
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        var line = "\(Self.timestamp()) \(event.level) \(label)[\(getpid())]:"
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(value)"
        }
        line += " \(event.message)"
        sink.write(line)
    }

    /// UTC, to the millisecond.
    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
        let milliseconds = Int(now.tv_nsec / 1_000_000)
        let fraction = String(milliseconds + 1000).dropFirst()
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self) + ".\(fraction)Z"
    }
}
