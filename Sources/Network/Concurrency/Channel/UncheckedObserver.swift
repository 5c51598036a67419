/// An `@isolated(any)` observer that is not `Sendable`, kept by a `Sendable` object. Sound
/// because only one task (an `IsolatedEventPump`) ever calls it, awaiting each call, and the
/// call runs in the closure's own isolation.
struct UncheckedObserver<Owner, Value>: @unchecked Sendable {
    let handler: @isolated(any) (Owner, Value) -> Void

    init(_ handler: @escaping @isolated(any) (Owner, Value) -> Void) {
        self.handler = handler
    }
}
