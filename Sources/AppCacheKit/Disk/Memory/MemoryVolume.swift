import Foundation

/// The files of one in-memory cache root: a directory tree that lives in this process's memory
/// for as long as a configuration (or a cache opened with one) holds the volume.
///
/// An in-memory configuration (``AppCache/Configuration/inMemory(schemaVersion:user:clock:)``)
/// names its root with a path under ``pathPrefix``, which no real file can have (`/dev/null` is
/// not a directory). The disk layer makes its usual system calls through ``SystemCalls``, which
/// sends every call for such a path, or for a descriptor ``MemoryFiles`` handed out, to the
/// tree instead of the kernel: the cache keeps its layout, journal, packs, lock file and
/// outbox, with the same rules, and no file is made, read or removed.
///
/// Thread safety: `Sendable`; the tree is reached only under ``MemoryFiles``' lock.
final class MemoryVolume: Sendable {
    /// How the root path of every in-memory volume begins.
    static let pathPrefix = "/dev/null/appcache-in-memory-"

    /// The root's path: ``pathPrefix`` and a unique number.
    let rootPath: String
    /// The device number `stat` gives for the volume's files.
    let device: UInt64

    /// Makes an empty volume and registers it, so that paths under ``rootPath`` reach it.
    init() {
        let number = UniqueNumbers.next()
        rootPath = Self.pathPrefix + String(number, radix: 16)
        device = 0x4D45_4D00_0000_0000 | (number & 0xFFFF_FFFF)
        MemoryFiles.register(self)
    }

    deinit {
        MemoryFiles.unregister(rootPath)
    }

    /// Whether `path` is under an in-memory volume's root (a string check, no lock).
    @inline(__always)
    static func claims(_ path: String) -> Bool {
        path.utf8.starts(with: pathPrefix.utf8)
    }

    /// The root path `path` starts with (`path` itself when it is a root), if it is under
    /// ``pathPrefix``.
    static func rootPath(of path: String) -> Substring? {
        guard claims(path) else { return nil }
        let rest = path.utf8.dropFirst(pathPrefix.utf8.count)
        let end = rest.firstIndex(of: UInt8(ascii: "/")) ?? path.endIndex
        return path[path.startIndex..<end]
    }
}
