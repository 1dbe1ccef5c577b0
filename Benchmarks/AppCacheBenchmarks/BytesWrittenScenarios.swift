@_spi(Benchmarks) import AppCacheKit
import Foundation
import MenuModel

extension Scenarios {
    /// The bytes the process had the device write (`/proc/self/io` `write_bytes`, counted as
    /// page-cache pages are dirtied) per write-through update of one collection of 1 and of 100
    /// menu items, beside the payload's size: AppCache's layout (small archives appended to
    /// their user's pack) against the same cache writing each archive as a file of its own
    /// (the earlier layout, `packLimit` 0), each over many updates of a few keys.
    ///
    /// The goal: at most twice the payload plus one 4 KiB page per batch (each write-through is
    /// a batch of its own).
    func bytesWritten() throws {
        guard PlainFiles.deviceBytesWritten() != nil else {
            emit("\nbytes-written: /proc/self/io is not readable here; skipped")
            return
        }
        let updates = quick ? 200 : 2_000
        for (name, items) in [("[1]", smallCollection), ("[100]", menu)] {
            let payload = try PayloadCodec.binary.encodeItems(items).count
            func bytesPerUpdate(packLimit: Int?) throws -> Double {
                var settings = configuration(root("bytes-written"))
                settings.writeBackDelay = .zero
                if let packLimit { settings.packLimit = packLimit }
                let cache = try AppCache(configuration: settings)
                for key in 0..<4 { try cache.cacheItems(items, forKey: "k\(key)") }
                let before = PlainFiles.deviceBytesWritten() ?? 0
                for update in 0..<updates { try cache.cacheItems(items, forKey: "k\(update % 4)") }
                return Double((PlainFiles.deviceBytesWritten() ?? 0) - before) / Double(updates)
            }
            let files = try bytesPerUpdate(packLimit: 0)
            let packed = try bytesPerUpdate(packLimit: nil)
            let benchmark = "bytes-written: bytes the device is given per write-through update of \(name) (payload \(payload) bytes, \(updates) updates)"
            report.addValue(benchmark, subject: "payload (PayloadCodec.binary)", unit: "B", value: Double(payload))
            report.addValue(
                benchmark, subject: "AppCache, archive files only (the earlier layout)", unit: "B", value: files,
                baseline: ("the payload", Double(payload)))
            report.addValue(
                benchmark, subject: "AppCache (small archives in the user's pack)", unit: "B", value: packed,
                baseline: ("the goal, 2 x payload + 4 KiB", Double(2 * payload + 4096)), goal: 1.0)
        }
    }
}
