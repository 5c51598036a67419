import Foundation
import NIOPosix

/// Reads a PAC script's text from wherever `PACSource` says it is.
///
/// Every path enforces `maximumScriptSize` while reading (a PAC server or file that never ends
/// cannot exhaust memory) and reads off the caller's executor (files on NIO's blocking pool,
/// HTTP through NIO).
enum PACScriptLoader {
    /// The script text at `source`.
    static func load(_ source: PACSource, configuration: PACConfiguration) async throws(PACError) -> String {
        let limit = configuration.maximumScriptSize
        switch source {
        case .script(let text):
            guard text.utf8.count <= limit else { throw .scriptTooLarge(limit: limit) }
            return text
        case .file(let path):
            return decode(try await readFile(path, limit: limit))
        case .url(let text):
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
                throw .loadFailed("not a URL: \(text)")
            }
            switch scheme {
            case "file":
                return decode(try await readFile(url.path, limit: limit))
            case "http", "https":
                return decode(try await PACHTTPFetcher.fetch(
                    url, maximumSize: limit, timeout: configuration.fetchTimeout, tls: configuration.tls))
            default:
                throw .loadFailed("unsupported URL scheme \(scheme) (http, https and file are supported)")
            }
        }
    }

    /// PAC files are ASCII in practice, but some carry Latin-1 comments; bytes that are not
    /// UTF-8 are read as Latin-1 (as browsers fall back) rather than rejected.
    static func decode(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return String(bytes.map { Character(Unicode.Scalar($0)) })
    }

    /// The bytes of the file at `path`, read on NIO's blocking pool, at most `limit` of them.
    private static func readFile(_ path: String, limit: Int) async throws(PACError) -> [UInt8] {
        do {
            return try await NIOThreadPool.singleton.runIfActive { () throws(PACError) -> [UInt8] in
                guard let handle = FileHandle(forReadingAtPath: path) else {
                    throw PACError.loadFailed("cannot open \(path)")
                }
                defer { try? handle.close() }
                // One byte past the limit tells "exactly at the limit" from "too large".
                let data: Data
                do {
                    data = try handle.read(upToCount: limit + 1) ?? Data()
                } catch {
                    throw PACError.loadFailed("cannot read \(path): \(error)")
                }
                guard data.count <= limit else { throw PACError.scriptTooLarge(limit: limit) }
                return [UInt8](data)
            }
        } catch let error as PACError {
            throw error
        } catch {
            throw .loadFailed("cannot read \(path): \(error)")
        }
    }
}
