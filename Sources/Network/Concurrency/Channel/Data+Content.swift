import Foundation

extension Data {
    /// `content` as one `Data` for a message send: itself when it already is one (no copy:
    /// `Data(content)` copies even a `Data`, into new storage, two allocations for a small
    /// message), else its bytes copied once.
    init<Content: DataProtocol>(messageContent content: Content) {
        if let data = content as? Data {
            self = data
        } else {
            self.init(content)
        }
    }
}
