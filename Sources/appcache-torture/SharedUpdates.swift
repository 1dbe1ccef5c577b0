import AppCacheKit
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MenuModel

/// An item two processes append to one collection.
struct AppendedItem: CacheableModel, Equatable {
    var owner: String
    var index: Int

    static var cacheName: String { "AppendedItems" }
}

/// Two processes append to one collection with `updateItems` at once, as an app and its widget
/// updating one list: each appends its items one at a time, one of them is stopped for a while
/// holding the lock file, and at the end the collection must hold every item of both, once,
/// each process's in its order. `updateItems` reads the newest collection, transforms it with
/// no lock held, and writes the result under the lock only if nothing changed since: a lost
/// update would show as a missing item.
///
/// Child lines: `N count` (progress), `S busy conflicts` at the end (how often an update gave
/// up with `busy` or `updateContention` and was tried again), `VIOLATION text`.
struct SharedUpdates {
    let base: URL
    let rounds: Int
    let itemsPerProcess: Int
    let report: Report
    var random: SeededRandom

    mutating func run() throws {
        var busy = 0
        var conflicts = 0
        var stops = 0
        let started = Date()
        for round in 0..<rounds {
            let root = base.appending(path: "shared-updates-\(round)", directoryHint: .isDirectory)
            func spawn(_ owner: String) throws -> ChildProcess {
                try ChildProcess(arguments: [
                    "--child", "appender", "--root", root.path(percentEncoded: false), "--owner", owner, "--count", "\(itemsPerProcess)",
                ])
            }
            let appenders = [try spawn("A"), try spawn("B")]
            // Midway, the second is stopped holding the lock file for a second and a half.
            usleep(UInt32(200_000 + random.next() % 400_000))
            let lockFile = root.appending(path: "version-1/.lock").path(percentEncoded: false)
            if StoppedPeer.stop(appenders[1], whileHolding: lockFile, random: &random) {
                usleep(1_500_000)
                appenders[1].resume()
                stops += 1
            }
            for appender in appenders where !appender.wait(timeout: 300) {
                report.violation("shared updates round \(round): an appender did not finish (hang)")
            }
            for appender in appenders {
                if !appender.exitedCleanly { report.violation("shared updates round \(round): an appender ended with \(appender.termination)") }
                for line in appender.printed {
                    if line.hasPrefix("VIOLATION") { report.violation("shared updates round \(round): \(line)") }
                    let fields = line.split(separator: "\t")
                    if fields.first == "S", fields.count == 3 {
                        busy += Int(fields[1]) ?? 0
                        conflicts += Int(fields[2]) ?? 0
                    }
                }
            }
            report.episodes += 1
            report.operations += 2 * itemsPerProcess
            verify(root: root, round: round)
        }
        report.figure(String(
            format: "shared updates: %d rounds of 2 processes appending %d items each with updateItems (%d stopped holding the lock for 1.5 s): %d updates tried again after busy, %d after updateContention (%.1f s)",
            rounds, itemsPerProcess, stops, busy, conflicts, Date().timeIntervalSince(started)))
    }

    /// Every item of both processes, once, each process's in its order.
    private func verify(root: URL, round: Int) {
        do {
            var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "u0")
            TortureLayout.apply(to: &configuration)
            configuration.flushesAtExit = false
            let items = try AppCache(configuration: configuration).getCachedItems(AppendedItem.self, forKey: "shared") ?? []
            for owner in ["A", "B"] {
                let indices = items.filter { $0.owner == owner }.map(\.index)
                if indices != Array(0..<itemsPerProcess) {
                    let missing = Set(0..<itemsPerProcess).subtracting(indices).count
                    report.violation(
                        "shared updates round \(round): \(owner)'s items are not all there once and in order (\(indices.count) items, \(missing) missing): an update was lost")
                }
            }
            if items.count != 2 * itemsPerProcess {
                report.violation("shared updates round \(round): the collection holds \(items.count) items, not \(2 * itemsPerProcess)")
            }
        } catch {
            report.violation("shared updates round \(round): reading the collection failed: \(error)")
        }
    }

    /// The child side: appends `count` items as `owner`, one `updateItems` each, trying again
    /// after `busy` (the other process stopped holding the lock) and `updateContention` (the other
    /// kept changing the collection).
    static func appendAsChild(root: URL, owner: String, count: Int) throws {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "u0")
        TortureLayout.apply(to: &configuration)
        configuration.diagnostics = { problem in
            if problem.code != .busy { emit("VIOLATION diagnostics: \(problem)") }
        }
        let cache = try AppCache(configuration: configuration)
        var busy = 0
        var conflicts = 0
        for index in 0..<count {
            while true {
                do {
                    try cache.updateItems(AppendedItem.self, forKey: "shared") { items in
                        items.append(AppendedItem(owner: owner, index: index))
                    }
                    break
                } catch let error as AppCacheError where error.code == .busy {
                    busy += 1
                } catch let error as AppCacheError where error.code == .updateContention {
                    conflicts += 1
                }
            }
            if index % 50 == 49 { emit("N\t\(index + 1)") }
            // Paced (about 2 s in all), so that the other process is still appending when one
            // is stopped holding the lock.
            usleep(2000)
        }
        emit("S\t\(busy)\t\(conflicts)")
    }
}
