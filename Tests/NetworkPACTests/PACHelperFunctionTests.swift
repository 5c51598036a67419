import Foundation
import Testing
@testable import NetworkPAC

/// Each standard helper, called from JavaScript on a real heap, against fixed name answers
/// (`PACTestEnvironment`), fixed local addresses and a fixed clock.
@Suite struct PACHelperFunctionTests {
    private static func check(_ cases: [(String, String)]) async throws {
        let evaluator = try await PACEvaluator.compile(
            PACTestEnvironment.expressionScript, configuration: PACTestEnvironment.configuration())
        for (expression, expected) in cases {
            let answer = try await evaluator.findProxy(url: expression, host: "")
            #expect(answer == expected, "\(expression)")
        }
    }

    @Test func hostNameHelpers() async throws {
        try await Self.check([
            ("isPlainHostName('www')", "true"),
            ("isPlainHostName('www.example.test')", "false"),
            ("dnsDomainIs('www.example.test', '.example.test')", "true"),
            ("dnsDomainIs('www.example.test', '.other.test')", "false"),
            ("dnsDomainIs('example.test', '.example.test')", "false"),
            ("localHostOrDomainIs('www.example.test', 'www.example.test')", "true"),
            ("localHostOrDomainIs('www', 'www.example.test')", "true"),
            ("localHostOrDomainIs('www.other.test', 'www.example.test')", "false"),
            ("localHostOrDomainIs('home', 'www.example.test')", "false"),
            ("dnsDomainLevels('www')", "0"),
            ("dnsDomainLevels('www.example.test')", "2"),
        ])
    }

    @Test func resolutionHelpers() async throws {
        try await Self.check([
            ("isResolvable('www.example.test')", "true"),
            ("isResolvable('v6only.test')", "false"),
            ("isResolvable('nowhere.test')", "false"),
            ("isResolvable('10.0.0.1')", "true"),
            ("dnsResolve('www.example.test')", "192.0.2.10"),
            ("dnsResolve('multi.test')", "198.51.100.7"),
            ("dnsResolve('v6only.test')", "null"),
            ("dnsResolve('nowhere.test')", "null"),
            ("myIpAddress()", "10.1.2.3"),
        ])
    }

    @Test func isInNet() async throws {
        try await Self.check([
            ("isInNet('192.0.2.10', '192.0.2.0', '255.255.255.0')", "true"),
            ("isInNet('198.51.100.1', '192.0.2.0', '255.255.255.0')", "false"),
            ("isInNet('www.example.test', '192.0.2.0', '255.255.255.0')", "true"),
            ("isInNet('nowhere.test', '0.0.0.0', '0.0.0.0')", "false"),
            ("isInNet('200.1.2.3', '200.0.0.0', '255.0.0.0')", "true"),
            ("isInNet('10.1.2.3', '10.1.2.3', '255.255.255.255')", "true"),
            ("isInNet('10.1.2.4', '10.1.2.3', '255.255.255.255')", "false"),
            ("isInNet('10.1.2.3', 'bogus', '255.0.0.0')", "false"),
            ("isInNet(myIpAddress(), '10.0.0.0', '255.0.0.0')", "true"),
        ])
    }

    @Test func shExpMatch() async throws {
        try await Self.check([
            ("shExpMatch('http://www.example.test/a', '*.example.test/*')", "true"),
            ("shExpMatch('http://www.example.test/a', '*.other.test/*')", "false"),
            ("shExpMatch('abc', 'a?c')", "true"),
            ("shExpMatch('abc', 'a?d')", "false"),
            ("shExpMatch('a.b', 'a*b')", "true"),
            ("shExpMatch('axb', 'a.b')", "false"),
            ("shExpMatch('', '*')", "true"),
            ("shExpMatch('abc', '')", "false"),
            ("shExpMatch('a+b(c)', 'a+b(c)')", "true"),
            ("shExpMatch('aaa', '*a*a*a*')", "true"),
            ("shExpMatch('aa', '*a*a*a*')", "false"),
        ])
    }

    @Test func weekdayRange() async throws {
        try await Self.check([
            ("weekdayRange('WED', 'GMT')", "true"),
            ("weekdayRange('TUE', 'GMT')", "false"),
            ("weekdayRange('MON', 'FRI', 'GMT')", "true"),
            ("weekdayRange('SAT', 'WED', 'GMT')", "true"),
            ("weekdayRange('THU', 'TUE', 'GMT')", "false"),
            ("weekdayRange('mon', 'fri', 'gmt')", "true"),
            ("weekdayRange('XYZ')", "false"),
            ("weekdayRange()", "false"),
        ])
    }

    @Test func dateRange() async throws {
        try await Self.check([
            ("dateRange(4, 'GMT')", "true"),
            ("dateRange(5, 'GMT')", "false"),
            ("dateRange('MAR', 'GMT')", "true"),
            ("dateRange(2026, 'GMT')", "true"),
            ("dateRange(1, 10, 'GMT')", "true"),
            ("dateRange(5, 31, 'GMT')", "false"),
            ("dateRange('FEB', 'APR', 'GMT')", "true"),
            ("dateRange('NOV', 'FEB', 'GMT')", "false"),
            ("dateRange('DEC', 'MAR', 'GMT')", "true"),
            ("dateRange(2025, 2027, 'GMT')", "true"),
            ("dateRange(1, 'MAR', 10, 'MAR', 'GMT')", "true"),
            ("dateRange(5, 'MAR', 10, 'APR', 'GMT')", "false"),
            ("dateRange(20, 'FEB', 4, 'MAR', 'GMT')", "true"),
            ("dateRange('JAN', 2026, 'MAR', 2026, 'GMT')", "true"),
            ("dateRange('APR', 2025, 'FEB', 2026, 'GMT')", "false"),
            ("dateRange(4, 'MAR', 2026, 4, 'MAR', 2026, 'GMT')", "true"),
            ("dateRange(1, 'JAN', 2027, 1, 'JAN', 2028, 'GMT')", "false"),
            ("dateRange('MAR', 4)", "false"),
            ("dateRange(1, 2, 3)", "false"),
        ])
    }

    @Test func timeRange() async throws {
        try await Self.check([
            ("timeRange(13, 'GMT')", "true"),
            ("timeRange(14, 'GMT')", "false"),
            ("timeRange(12, 13, 'GMT')", "true"),
            ("timeRange(9, 12, 'GMT')", "false"),
            ("timeRange(22, 14, 'GMT')", "true"),
            ("timeRange(13, 45, 13, 45, 'GMT')", "true"),
            ("timeRange(13, 46, 14, 0, 'GMT')", "false"),
            ("timeRange(13, 45, 30, 13, 45, 30, 'GMT')", "true"),
            ("timeRange(13, 45, 31, 23, 0, 0, 'GMT')", "false"),
            ("timeRange('x')", "false"),
        ])
    }

    /// Without "GMT" the helpers read local time, as the process's time zone defines it.
    @Test func localTimeVariants() async throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone.current
        let parts = calendar.dateComponents([.hour, .weekday, .day, .month], from: PACTestEnvironment.now)
        let days = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
        let months = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
        let hour = try #require(parts.hour), weekday = try #require(parts.weekday)
        let day = try #require(parts.day), month = try #require(parts.month)
        try await Self.check([
            ("timeRange(\(hour))", "true"),
            ("timeRange(\((hour + 1) % 24))", "false"),
            ("weekdayRange('\(days[weekday - 1])')", "true"),
            ("dateRange(\(day), '\(months[month - 1])', \(day), '\(months[month - 1])')", "true"),
        ])
    }

    @Test func microsoftIPv6Extensions() async throws {
        try await Self.check([
            ("isResolvableEx('v6only.test')", "true"),
            ("isResolvableEx('nowhere.test')", "false"),
            ("dnsResolveEx('multi.test')", "2001:db8::1;198.51.100.7;198.51.100.8"),
            ("dnsResolveEx('nowhere.test')", ""),
            ("dnsResolveEx('2001:db8::5')", "2001:db8::5"),
            ("myIpAddressEx()", "10.1.2.3;fd00::3"),
            ("isInNetEx('2001:db8::10', '2001:db8::/32')", "true"),
            ("isInNetEx('2001:db9::1', '2001:db8::/32')", "false"),
            ("isInNetEx('192.0.2.10', '192.0.2.0/24')", "true"),
            ("isInNetEx('192.0.3.10', '192.0.2.0/24')", "false"),
            ("isInNetEx('www.example.test', '2001:db8::/64')", "true"),
            ("isInNetEx('192.0.2.10', '2001:db8::/32')", "false"),
            ("isInNetEx('::ffff:192.0.2.1', '::ffff:0:0/96')", "true"),
            ("isInNetEx('1.2.3.4', '1.2.3.0')", "false"),
            ("isInNetEx('1.2.3.4', '1.2.3.0/33')", "false"),
            ("sortIpAddressList('10.0.0.2;2001:db8::1;10.0.0.1;::1')", "::1;2001:db8::1;10.0.0.1;10.0.0.2"),
            ("sortIpAddressList('10.0.0.1;bogus')", "false"),
            ("sortIpAddressList('')", "false"),
            ("getClientVersion()", "1.0"),
        ])
    }

    @Test func hostIsLowercasedAndAlertIsHarmless() async throws {
        let evaluator = try await PACEvaluator.compile(
            "function FindProxyForURL(url, host) { alert('debug ' + host); return 'PROXY ' + host + ':1'; }",
            configuration: PACTestEnvironment.configuration())
        #expect(try await evaluator.evaluate(url: "http://WWW.Example.TEST/", host: "WWW.Example.TEST")
            == [.httpConnect(host: "www.example.test", port: 1)])
    }

    @Test func findProxyForURLExIsPreferred() async throws {
        let evaluator = try await PACEvaluator.compile(
            """
            function FindProxyForURL(url, host) { return 'DIRECT'; }
            function FindProxyForURLEx(url, host) { return 'PROXY [2001:db8::1]:3128; DIRECT'; }
            """,
            configuration: PACTestEnvironment.configuration())
        #expect(try await evaluator.evaluate(url: "http://a.test/", host: "a.test")
            == [.httpConnect(host: "2001:db8::1", port: 3128), .direct])
    }
}
