import Foundation

/// A directory of its own for one test, removed when the value goes away.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appending(path: "AppCacheKitTests-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var path: String { url.path(percentEncoded: false) }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
