import Foundation

/// Times two sides of one comparison in interleaved rounds (the side that goes first
/// alternates), and reports each side's median and the ratio of the medians.
struct Comparison {
    let title: String
    /// Each side's seconds per collection, one sample per round.
    var appCache: [Double] = []
    var grdb: [Double] = []

    /// Runs `rounds` rounds; each side's closure does its work once and returns how many
    /// collections it handled, and is timed as a whole.
    static func run(
        _ title: String, rounds: Int, appCache: () throws -> Int, grdb: () throws -> Int
    ) rethrows -> Comparison {
        var comparison = Comparison(title: title)
        let clock = ContinuousClock()
        func time(_ body: () throws -> Int) rethrows -> Double {
            let start = clock.now
            let count = try body()
            let elapsed = clock.now - start
            return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) / Double(max(count, 1))
        }
        // One round of each, untimed: first calls warm code and files.
        _ = try appCache()
        _ = try grdb()
        for round in 0..<rounds {
            if round % 2 == 0 {
                comparison.appCache.append(try time(appCache))
                comparison.grdb.append(try time(grdb))
            } else {
                comparison.grdb.append(try time(grdb))
                comparison.appCache.append(try time(appCache))
            }
        }
        return comparison
    }

    var appCacheMedian: Double { Self.median(appCache) }
    var grdbMedian: Double { Self.median(grdb) }
    var ratio: Double { appCacheMedian / grdbMedian }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// A duration in seconds, for the table.
func format(seconds: Double) -> String {
    switch seconds {
    case ..<1e-6: String(format: "%.0f ns", seconds * 1e9)
    case ..<1e-4: String(format: "%.1f µs", seconds * 1e6)
    case ..<1e-3: String(format: "%.0f µs", seconds * 1e6)
    default: String(format: "%.2f ms", seconds * 1e3)
    }
}

/// A ratio for the table: below 1, also as "1/n".
func format(ratio: Double) -> String {
    ratio < 0.1 ? String(format: "%.3fx (1/%.0f)", ratio, 1 / ratio) : String(format: "%.2fx", ratio)
}

/// A size in bytes, for the table.
func format(bytes: Int) -> String {
    bytes >= 1 << 20 ? String(format: "%.2f MB", Double(bytes) / 1e6) : bytes >= 10_000 ? String(format: "%.1f kB", Double(bytes) / 1e3) : "\(bytes) B"
}

/// The bytes the files under `path` take on the device (allocated blocks, as `du` counts
/// them), links not followed.
func allocatedBytes(under path: String) -> Int {
    var total = 0
    let enumerator = FileManager.default.enumerator(atPath: path)
    while let name = enumerator?.nextObject() as? String {
        var info = stat()
        if lstat(path + "/" + name, &info) == 0 { total += Int(info.st_blocks) * 512 }
    }
    return total
}

/// The bytes this process has caused to be written to the device so far
/// (`/proc/self/io` `write_bytes`, counted as pages are dirtied); `nil` where the system does
/// not say.
func deviceBytesWritten() -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("write_bytes:") })
    else { return nil }
    return Int(line.split(separator: " ").last ?? "")
}
