import Testing
@testable import NetworkPAC

/// What PAC log lines leave out: URL passwords, script text and the messages scripts raise.
@Suite("PAC.Logging")
struct PACLoggingTests {
    @Test("URLs in PAC log lines lose their user name and password")
    func userInfoRedaction() {
        #expect(PACError.redactingUserInfo("http://user:pw@wpad.example:8080/x.pac") == "http://wpad.example:8080/x.pac")
        #expect(PACError.redactingUserInfo("cannot fetch https://a@b@h/p from http://u:p@h2") == "cannot fetch https://h/p from http://h2")
        #expect(PACError.redactingUserInfo("no URL here: user@host") == "no URL here: user@host")
        #expect(PACSource.url("http://u:secret@h/p.pac").logDescription == "http://h/p.pac")
        #expect(PACError.scriptError("secret from the script").logDescription.contains("secret") == false)
    }
}
