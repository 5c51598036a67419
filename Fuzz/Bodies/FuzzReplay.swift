import Foundation

/// Runs a target over files instead of libFuzzer's mutations: the corpus as a regression check,
/// or one crash input under a debugger.
package enum FuzzReplay {
    /// The files named by `paths`, directories expanded (sorted, hidden files skipped).
    package static func files(_ paths: [String]) -> [URL] {
        paths.flatMap { path -> [URL] in
            let url = URL(fileURLWithPath: path)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
            guard isDirectory.boolValue else { return [url] }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            return names.filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.sorted().map { url.appendingPathComponent($0) }
        }
    }

    /// The seed corpus directory of `target` in a checkout whose root is `root`.
    package static func corpus(of target: FuzzTarget, root: URL) -> URL {
        root.appendingPathComponent("Fuzz/Corpus/\(target.rawValue)")
    }

    /// The executable's `main` when it is built without libFuzzer: `fuzz-network TARGET [PATH...]`
    /// replays the files and directories given (the target's seed corpus when none are) and
    /// says how many inputs ran.
    package static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            print("usage: fuzz-network \(names) [FILE or DIRECTORY...]")
            exit(2)
        }
        var paths = Array(arguments.dropFirst())
        if paths.isEmpty {
            paths = [corpus(of: target, root: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).path]
        }
        let inputs = files(paths)
        for input in inputs {
            guard let data = FileManager.default.contents(atPath: input.path) else { continue }
            target.run(Array(data))
        }
        print("fuzz-network \(target.rawValue): replayed \(inputs.count) inputs without a finding")
    }
}
