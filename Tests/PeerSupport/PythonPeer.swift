import Foundation
import Testing

/// The python that runs a peer script needing a pinned PyPI package: `/usr/bin/python3` (where
/// `scripts/install-deps.sh` installs them) when it has the package, else the `python3` on PATH
/// when that one does. Nil, with a failure under CI, when neither has it.
public enum PythonPeer {
    /// `Tests/PeerScripts`.
    public static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("PeerScripts")

    public static func interpreter(
        package: String, version: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String? {
        var candidates = ["/usr/bin/python3"].filter { FileManager.default.isExecutableFile(atPath: $0) }
        if let onPath = PeerProcess.executable("python3", package: "python3", sourceLocation: sourceLocation), !candidates.contains(onPath) {
            candidates.append(onPath)
        }
        var said: [String] = []
        for python in candidates {
            let check = try PeerProcess(python, ["-c", "import importlib.metadata as m; print('\(package)', m.version('\(package)'))"])
            _ = await check.waitForExit(timeout: 30)
            let answer = String(decoding: check.standardOutput, as: UTF8.self)
            if answer.contains("\(package) \(version)") { return python }
            said.append("\(python): \(answer.debugDescription)")
        }
        PeerProcess.missingPeer(
            "python \(package) \(version) is not installed (\(said.joined(separator: "; "))): run scripts/install-deps.sh (python3 -m pip install \(package)==\(version))",
            sourceLocation: sourceLocation)
        return nil
    }
}
