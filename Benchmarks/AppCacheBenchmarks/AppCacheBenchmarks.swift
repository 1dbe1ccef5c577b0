import Foundation

/// `swift run -c release AppCacheBenchmarks [--quick] [--json FILE] [--svg FILE] [--sizes N,N,...] [NAME ...]`
///
/// Measures AppCache beside its baselines in one run and prints each figure with its ratio.
/// NAME filters the benchmarks by substring (a NAME that is a benchmark's whole name selects
/// that one alone): resident-per-limit, resident-memory, codec, memory-hit, load, updates,
/// cache-items, disk-hit, disk-hit-one, flush, bytes-written, disk-budget, listing, scaling, concurrency,
/// slow-disk, cross-process, upgrade, watch, update-item, pending-hit, background-refresh, events-hit, threads.
@main
struct AppCacheBenchmarks {
    static let names = [
        "resident-per-limit", "resident-memory", "codec", "memory-hit", "load", "updates", "cache-items", "disk-hit", "disk-hit-one", "flush", "bytes-written", "disk-budget", "listing", "scaling", "concurrency", "slow-disk", "cross-process", "upgrade", "watch", "update-item", "pending-hit", "background-refresh", "events-hit", "threads",
    ]

    static func main() throws {
        var quick = false
        var jsonPath: String?
        var svgPath: String?
        var filters: [String] = []
        var sizes: [Int]?
        var arguments = CommandLine.arguments.dropFirst()
        if arguments.first == MemoryLimitFill.childFlag {
            try MemoryLimitFill.run(Array(arguments.dropFirst()))
            return
        }
        if arguments.first == Scenarios.crossProcessFlag {
            try Scenarios.runCrossProcessChild(Array(arguments.dropFirst()))
            return
        }
        while let argument = arguments.popFirst() {
            switch argument {
            case "--quick": quick = true
            case "--json": jsonPath = arguments.popFirst()
            case "--svg": svgPath = arguments.popFirst()
            case "--sizes":
                sizes = arguments.popFirst()?.split(separator: ",").compactMap { Int($0) }
                guard let sizes, !sizes.isEmpty, sizes.allSatisfy({ $0 > 0 }) else {
                    FileHandle.standardError.write(Data("--sizes takes entry counts, as in 1000,1000000\n".utf8))
                    exit(2)
                }
            case "--help", "-h":
                emit("usage: AppCacheBenchmarks [--quick] [--json FILE] [--svg FILE] [--sizes N,N,...] [NAME ...]\nnames: \(names.joined(separator: ", "))\n--sizes: the entry counts of the scaling benchmark")
                return
            default:
                guard !argument.hasPrefix("-") else {
                    FileHandle.standardError.write(Data("unknown option \(argument)\n".utf8))
                    exit(2)
                }
                filters.append(argument)
            }
        }
        #if DEBUG
        let banner = String(repeating: "!", count: 78)
        FileHandle.standardError.write(Data("""
            \(banner)
            !! DEBUG BUILD: these timings mean nothing. Run: swift run -c release AppCacheBenchmarks
            \(banner)\n
            """.utf8))
        #endif

        let selected = names.filter { name in
            filters.isEmpty || filters.contains { filter in
                names.contains(filter) ? filter == name : name.contains(filter) || filter.contains(name)
            }
        }
        guard !selected.isEmpty else {
            FileHandle.standardError.write(Data("no benchmark matches \(filters); names: \(names.joined(separator: ", "))\n".utf8))
            exit(2)
        }
        let work = FileManager.default.temporaryDirectory.appending(path: "AppCacheBenchmarks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }

        emit("AppCache benchmarks: \(buildConfiguration) build, \(ProcessInfo.processInfo.activeProcessorCount) cores, \(quick ? "quick" : "full") run, \(Date())")
        let report = Report()
        let scenarios = Scenarios(quick: quick, report: report, workDirectory: work, scalingSizes: sizes)
        for name in selected {
            switch name {
            case "resident-per-limit": try scenarios.memoryLimit()
            case "resident-memory": try scenarios.residentMemory()
            case "codec": try scenarios.codec()
            case "memory-hit": try scenarios.memoryHit()
            case "load": try scenarios.load()
            case "updates": try scenarios.updates()
            case "cache-items": try scenarios.cacheItems()
            case "disk-hit": try scenarios.diskHit()
            case "disk-hit-one": try scenarios.oneItemDiskHit()
            case "flush": try scenarios.flush()
            case "bytes-written": try scenarios.bytesWritten()
            case "disk-budget": try scenarios.diskBudget()
            case "listing": try scenarios.listing()
            case "concurrency": try scenarios.concurrency()
            case "slow-disk": try scenarios.slowDisk()
            case "cross-process": try scenarios.crossProcess()
            case "upgrade": try scenarios.upgrade()
            case "watch": try scenarios.watch()
            case "update-item": try scenarios.updateItem()
            case "pending-hit": try scenarios.pendingHit()
            case "events-hit": try scenarios.eventsHit()
            case "background-refresh": try scenarios.backgroundRefresh()
            case "threads": try scenarios.threads()
            case "scaling":
                let series = try scenarios.scaling()
                // A full run at the standard sizes refreshes the README's chart; a quick run or
                // one at other sizes writes a chart only where `--svg` asks.
                if let path = svgPath ?? (quick || sizes != nil ? nil : "Benchmarks/scaling.svg") {
                    let chart = ScalingChart(title: "AppCache: cost per operation as the cache grows", series: series)
                    try chart.svg().write(toFile: path, atomically: true, encoding: .utf8)
                    emit("\nwrote the scaling chart to \(path)")
                }
            default: break
            }
        }
        if let jsonPath {
            try report.writeJSON(to: URL(filePath: jsonPath), quick: quick)
            emit("\nwrote all results to \(jsonPath)")
        }
    }
}
