import AppCacheKit
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The reader child of the removal mode: reads a user's collections in a loop, from memory or
/// from the disk, while the parent removes them; once it has seen the parent's marker file
/// (created after the removal call returned), every read must miss.
///
/// Prints `READY` once it has read every collection whole, `VIOLATION text`, and at the end
/// `R hits readsAfterMarker`.
struct RemovalReader {
    let root: URL
    let user: String
    /// Created by the parent once the removal call returned.
    let marker: String
    /// Created by the parent when the reader is to stop.
    let stop: String
    /// Whether reads may be served from this process's memory (else every read goes to disk).
    let usesMemory: Bool

    func run() throws {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: user)
        configuration.writeBackDelay = .zero
        configuration.flushesAtExit = false
        configuration.memoryEntryLimit = usesMemory ? 64 : 0
        configuration.diagnostics = { _ in }
        let cache = try AppCache(configuration: configuration)
        var ready = false
        var hits = 0
        var afterMarker = 0
        let deadline = Date().addingTimeInterval(120)
        while access(stop, F_OK) != 0 && Date() < deadline {
            var whole = 0
            for key in RemovalMode.keys {
                let sawMarker = access(marker, F_OK) == 0
                let items = try cache.getCachedItems(TortureItem.self, forKey: key)
                let date = sawMarker ? cache.cachedDate(TortureItem.self, forKey: key) : nil
                if sawMarker { afterMarker += 1 }
                if date != nil { emit("VIOLATION \(user)'s \(key) has a cached date after the removal returned") }
                guard let items else { continue }
                hits += 1
                if let problem = TortureItem.problem(with: items, user: user, key: key) {
                    emit("VIOLATION \(user)'s \(key): \(problem)")
                } else if sawMarker {
                    emit("VIOLATION \(user)'s \(key) read (write \(items[0].sequence)) after the removal returned")
                } else {
                    whole += 1
                }
            }
            if !ready && whole == RemovalMode.keys.count {
                ready = true
                emit("READY")
            }
        }
        emit("R\t\(hits)\t\(afterMarker)")
    }
}
