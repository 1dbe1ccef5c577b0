import AppCacheKit
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The child of the removal mode that writes a user's collections, waits for the parent's go
/// (the parent then holds the lock file's lock, so no batch of this process can run), removes
/// them through one call, and kills itself (`SIGKILL`) the moment the call returns: before its
/// background batch could move anything off the disk.
///
/// Prints `WRITTEN` once its writes are on disk, and `VIOLATION text` when a call fails.
struct KilledRemover {
    let root: URL
    let user: String
    let call: RemovalCall
    /// Created by the parent once it holds the lock.
    let go: String

    func run() throws {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: user)
        configuration.writeBackDelay = .zero
        configuration.flushesAtExit = false
        configuration.diagnostics = { _ in }
        let cache = try AppCache(configuration: configuration)
        for (number, key) in RemovalMode.keys.enumerated() {
            try cache.cacheItems(TortureItem.collection(user: user, key: key, sequence: number + 1), forKey: key)
        }
        emit("WRITTEN")
        let deadline = Date().addingTimeInterval(60)
        while access(go, F_OK) != 0 {
            guard Date() < deadline else {
                emit("VIOLATION the parent never said go")
                return
            }
            usleep(1000)
        }
        try call.perform(on: cache, user: user)
        kill(getpid(), SIGKILL)
    }
}
