public import Foundation

/// A directory of its own for one test, removed when the value goes away.
public final class TemporaryDirectory: Sendable {
    public let url: URL

    /// Creates an empty directory, in the system's temporary directory unless told otherwise.
    ///
    /// - Parameter prefix: the start of its name, telling whose it is when one is left behind.
    /// - Parameter base: where to make it; the system's temporary directory by default.
    public init(prefix: String = "AppCacheTests", in base: URL = FileManager.default.temporaryDirectory) throws {
        url = base.appending(path: "\(prefix)-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The directory's path.
    public var path: String { url.path(percentEncoded: false) }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
