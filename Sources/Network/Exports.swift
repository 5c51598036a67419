// The Security framework's TLS surface (sec_protocol_options_t and friends) lives in the
// `Security` module of this package, re-exported here: on Apple platforms `import Network` is
// enough to use it, and code that also writes `import Security` finds that module too.
@_exported import Security
