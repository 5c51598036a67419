import Logging
import Synchronization

/// The short names flows and listeners carry in log lines (`C1`, `C2`, … and `L1`, …, as in
/// Apple's logs). A flow keeps only the number (four bytes); the text is made when a line is
/// actually written.
enum LogIDs {
    private static let connections = Atomic<UInt32>(0)
    private static let listeners = Atomic<UInt32>(0)

    /// The next connection number (from 1; wraps after 2^32).
    static func nextConnection() -> UInt32 {
        connections.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// The next listener number (from 1).
    static func nextListener() -> UInt32 {
        listeners.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// The metadata every line about connection `id` carries, whichever part of the engine
    /// writes it (`grep 'connection=C7 '` finds its whole story).
    static func connectionMetadata(_ id: UInt32) -> Logger.Metadata {
        ["connection": "C\(id)"]
    }
}
