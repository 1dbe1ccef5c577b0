import Foundation

/// Runs one of the package's built example programs and captures what it prints.
struct ExampleProgram {
    struct Output {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    let name: String
    /// The program run, when it is not one of the package's own (a system tool).
    var executable: URL?

    /// The directory `swift build` put the executables in: the test bundle's own.
    static let productsDirectory: URL = {
        let candidates = [
            Bundle.main.bundleURL,
            URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent(),
        ]
        let found = candidates.first { directory in
            FileManager.default.isExecutableFile(atPath: directory.appending(path: "hotel-menu").path(percentEncoded: false))
        }
        return found ?? candidates[0]
    }()

    /// Runs the program to its end. Its output goes to files in `scratch` rather than pipes, so
    /// nothing can stall however much it prints.
    ///
    /// Waits without holding a thread: the tests share a few, and a blocked one starves the
    /// asynchronous tests running beside them.
    func run(_ arguments: [String], scratch: URL) async throws -> Output {
        let outputURL = scratch.appending(path: "\(name)-\(UUID().uuidString).out")
        let errorURL = scratch.appending(path: "\(name)-\(UUID().uuidString).err")
        try Data().write(to: outputURL)
        try Data().write(to: errorURL)
        let output = try FileHandle(forWritingTo: outputURL)
        let error = try FileHandle(forWritingTo: errorURL)
        defer {
            try? output.close()
            try? error.close()
            try? FileManager.default.removeItem(at: outputURL)
            try? FileManager.default.removeItem(at: errorURL)
        }

        let process = Process()
        process.executableURL = executable ?? Self.productsDirectory.appending(path: name)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = error
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        return Output(
            status: process.terminationStatus,
            standardOutput: try String(contentsOf: outputURL, encoding: .utf8),
            standardError: try String(contentsOf: errorURL, encoding: .utf8))
    }
}
