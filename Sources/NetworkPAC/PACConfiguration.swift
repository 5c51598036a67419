/// Limits and host services for loading and running one PAC script.
package struct PACConfiguration: Sendable {
    /// The most memory the script's JavaScript heap may hold. PAC scripts need well under a
    /// megabyte; the cap only has to stop a hostile or broken script from eating the process.
    package var memoryLimit: Int = 16 << 20
    /// How long compiling the script, or one `FindProxyForURL` call, may run. Past it the
    /// evaluator is disabled (see `PACEvaluator`).
    package var timeLimit: Double = 5
    /// The largest script the loader accepts, wherever it comes from.
    package var maximumScriptSize: Int = 1 << 20
    /// How long fetching an `http://` or `https://` script may take, connection included (per
    /// request, when redirected).
    package var fetchTimeout: Double = 10
    /// Who secures `https://` fetches. Nil (the default) fails every `https://` load: this
    /// module has no TLS stack; the engine passes its own, which verifies with the system trust
    /// store and the URL's host name like every TLS connection of this package.
    package var tls: (any PACTLSClient)?
    /// Name lookups, local addresses and clock as the script sees them.
    package var environment = PACHostEnvironment()

    /// The default limits and host services, and no TLS client.
    package init() {}
}
