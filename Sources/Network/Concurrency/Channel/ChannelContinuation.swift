/// The continuation a channel's cancellable waits use (`ChannelCore.cancellable`): checked in
/// debug builds, where resuming one twice or never traps or warns, and unchecked in release
/// builds, where a checked one costs an allocation and atomic operations per receive. Every
/// resume goes through a lock-guarded state or a flow callback that runs once.
#if DEBUG
typealias ChannelContinuation<T> = CheckedContinuation<T, any Error>
#else
typealias ChannelContinuation<T> = UnsafeContinuation<T, any Error>
#endif
