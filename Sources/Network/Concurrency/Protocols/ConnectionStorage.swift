/// Extra state a protocol layer keeps per connection; made empty with `init()`.
public protocol ConnectionStorage {
    /// Empty storage for a new connection.
    init()
}
