import AppCacheKit
import Foundation
import MenuModel

/// The book chapter's hotel menu screen, as a command-line program.
///
/// "Appearing" shows cached menu items at once, says how old they are, and asks the (simulated,
/// slow) menu server only when the cache is empty or stale. Run it twice: the second run
/// answers from the cache.
@main
struct HotelMenu {
    static let usage = """
        usage: hotel-menu [--root DIR] [--user NAME | --signed-out] [--schema-version V]
                          [--force-stale] [--server-delay MS] [--items N]

          --root DIR            cache directory (default: <temporary directory>/hotel-menu-cache)
          --user NAME           whose cache to use (default: guest)
          --signed-out          use the shared, signed-out space
          --schema-version V    the app's cache schema version (default: 1); a new one wipes the old
          --force-stale         treat cached items as stale, so they are shown and then refreshed
          --server-delay MS     how long the simulated server takes (default: 800)
          --items N             how many items the server returns (default: 12)
        """

    static func main() async {
        let options: Options
        do {
            options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            printError("hotel-menu: \(error)\n\n\(usage)")
            exit(2)
        }
        if options.help {
            print(usage)
            return
        }
        do {
            try await run(options)
        } catch {
            printError("hotel-menu: \(error)")
            exit(1)
        }
    }

    static func run(_ options: Options) async throws {
        var configuration = AppCache.Configuration(
            rootDirectory: options.root, schemaVersion: options.schemaVersion, user: options.user)
        if options.forceStale {
            configuration.setStalenessThreshold(.zero, for: MenuItem.self)
        }
        configuration.diagnostics = { problem in printError("[cache] recovered: \(problem.message)") }
        // A command-line program has no lifecycle notifications: what is still in memory is
        // written when the process exits (`flushesAtExit`, on by default).
        let cache = try AppCache(configuration: configuration)
        let threshold = configuration.stalenessThreshold(for: MenuItem.self)
        print("Hotel menu: user \(options.user ?? "(signed out)"), schema \(options.schemaVersion), cache \(options.root.path(percentEncoded: false))")

        // viewWillAppear: show what the cache has at once.
        let cached = try cache.cachedCollection(MenuItem.self)
        if let cached {
            let freshness = cached.isStale ? "stale" : "fresh"
            print("[cache] \(cached.items.count) menu items from the cache, cached \(describe(cached.age)) ago (\(freshness); threshold \(describe(threshold)))")
            show(cached.items)
        } else {
            print("[cache] no cached menu: showing a spinner")
        }

        // Refresh from the server when there is nothing, or only stale items, to show.
        guard cached == nil || cached?.isStale == true else {
            print("[server] not asked: the cached menu is fresh")
            return
        }
        let server = MenuServer(delay: options.serverDelay, itemCount: options.items)
        print("[server] fetching the menu...")
        let started = ContinuousClock.now
        let items = try await server.fetchMenu()
        print("[server] \(items.count) menu items received in \(describe(ContinuousClock.now - started))")
        try cache.cacheItems(items)
        print("[cache] saved \(items.count) menu items")
        show(items)
    }

    static func show(_ items: [MenuItem]) {
        for (index, item) in items.enumerated() {
            let chili = item.spicyLevel == 0 ? "mild" : "spicy \(item.spicyLevel)/5"
            print("  \(index + 1). \(item.name)  rating \(String(format: "%.1f", item.rating))  \(chili)  \(item.waitingTime) min")
        }
    }

    static func describe(_ duration: Duration) -> String {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        if abs(milliseconds) < 1000 { return "\(Int(milliseconds.rounded())) ms" }
        let seconds = Int((milliseconds / 1000).rounded())
        if abs(seconds) < 120 { return "\(seconds) s" }
        return "\(seconds / 60) min"
    }
}

/// The options `hotel-menu` takes.
struct Options {
    var root = FileManager.default.temporaryDirectory.appending(path: "hotel-menu-cache", directoryHint: .isDirectory)
    var user: String? = "guest"
    var schemaVersion = "1"
    var forceStale = false
    var serverDelay = Duration.milliseconds(800)
    var items = 12
    var help = false

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        func value(for flag: String) throws -> String {
            guard let value = remaining.popFirst() else { throw Invalid(description: "\(flag) needs a value") }
            return value
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--root": root = URL(filePath: try value(for: argument), directoryHint: .isDirectory)
            case "--user": user = try value(for: argument)
            case "--signed-out": user = nil
            case "--schema-version":
                schemaVersion = try value(for: argument)
                guard !schemaVersion.isEmpty else { throw Invalid(description: "--schema-version must not be empty") }
            case "--force-stale": forceStale = true
            case "--server-delay":
                guard let milliseconds = Int(try value(for: argument)), milliseconds >= 0 else {
                    throw Invalid(description: "--server-delay takes a whole number of milliseconds")
                }
                serverDelay = .milliseconds(milliseconds)
            case "--items":
                guard let count = Int(try value(for: argument)), count >= 0 else {
                    throw Invalid(description: "--items takes a whole number")
                }
                items = count
            case "--help", "-h": help = true
            default: throw Invalid(description: "unknown option '\(argument)'")
            }
        }
    }
}

/// A slow menu server, standing in for the network.
struct MenuServer {
    var delay: Duration
    var itemCount: Int

    func fetchMenu() async throws -> [MenuItem] {
        try await Task.sleep(for: delay)
        return MenuItem.sampleMenu(count: itemCount)
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
