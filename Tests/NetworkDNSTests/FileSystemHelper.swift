import Foundation

/// Writes the small configuration files the tests point the loader at.
enum FileSystemHelper {
    static func write(_ text: String, to directory: String, name: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try text.write(toFile: "\(directory)/\(name)", atomically: true, encoding: .utf8)
    }

    static func remove(_ directory: String) {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
