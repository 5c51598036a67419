// What `import Network` brings along, matched to Apple's module. Apple's `Network` re-exports its
// C module, whose headers pull in (and re-export) Dispatch, the C library (sockets, `sockaddr_in`,
// `IPPROTO_TCP`, `abort()`) and the Security framework's C TLS surface; Swift files that import
// only `Network` use all three, Apple's peer-to-peer sample among them. Foundation is not
// re-exported there, so it is not here either (code that uses `Data` imports Foundation itself).
// The decision is recorded in docs/api-deviations.md.

@_exported import Dispatch
// The Security framework's TLS surface (sec_protocol_options_t and friends) lives in the
// `Security` module of this package; code that also writes `import Security` finds it too.
@_exported import Security

#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Musl)
@_exported import Musl
#endif
