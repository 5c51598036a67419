/// The values of one framer message by key. Framers set one or two keys per message (a type, a
/// length), so the first value lives inline and only further keys go into a dictionary: a message
/// made per received frame then costs no dictionary storage and no hashing.
struct FramerMessageValues {
    private var firstKey: String?
    private var firstValue: UncheckedValue?
    private var others: [String: UncheckedValue] = [:]

    init() {}

    /// The value for `key`; setting nil removes it. A key is held in one place only: inline or
    /// in `others`.
    subscript(key: String) -> Any? {
        get {
            if firstKey == key { return firstValue?.value }
            return others.isEmpty ? nil : others[key]?.value
        }
        set {
            if firstKey == key {
                if let newValue {
                    firstValue = UncheckedValue(newValue)
                } else {
                    firstKey = nil
                    firstValue = nil
                }
            } else if firstKey == nil, let newValue, others.isEmpty || others[key] == nil {
                firstKey = key
                firstValue = UncheckedValue(newValue)
            } else {
                others[key] = newValue.map(UncheckedValue.init)
            }
        }
    }
}
