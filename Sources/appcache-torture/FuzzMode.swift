import Foundation
import MenuModel

/// The binary decoder against mutated payloads of both sample models (``PayloadFuzzer``), in
/// child processes of a seed each, two at a time: a crash or a hang takes only its child, and
/// is reported with the seed that reproduces it.
struct FuzzMode {
    let base: URL
    let quick: Bool
    let report: Report
    var random: SeededRandom

    /// How many children, and how many payloads each decodes.
    var children: Int { quick ? 2 : 100 }
    var mutationsPerChild: Int { quick ? 50_000 : 500_000 }

    mutating func run() throws {
        var decoded = 0
        var rejected = 0
        let seeds = (0..<children).map { _ in random.next() }
        for pair in stride(from: 0, to: seeds.count, by: 2) {
            let running = try seeds[pair..<min(pair + 2, seeds.count)].map { seed in
                (seed, try ChildProcess(arguments: [
                    "--child", "fuzz", "--seed", String(seed), "--mutations", String(mutationsPerChild),
                ]))
            }
            for (seed, child) in running {
                report.episodes += 1
                if !child.wait(timeout: 900) { report.violation("fuzz seed \(seed): hung") }
                if !child.exitedCleanly { report.violation("fuzz seed \(seed): the decoder child ended with \(child.termination)") }
                guard let done = child.printed.last(where: { $0.hasPrefix("DONE ") }) else {
                    report.violation("fuzz seed \(seed): no result")
                    continue
                }
                let numbers = done.split(separator: " ").dropFirst().compactMap { Int($0) }
                guard numbers.count == 3 else { continue }
                report.operations += numbers[0]
                decoded += numbers[1]
                rejected += numbers[2]
            }
        }
        report.figure("fuzz: \(decoded + rejected) mutated payloads decoded, \(rejected) refused, \(decoded) still valid, 0 crashes unless reported above")
    }
}

/// The child side of the fuzz mode.
enum FuzzChild {
    static func run(seed: UInt64, mutations: Int) {
        let result = PayloadFuzzer.run(mutations: mutations, seed: seed)
        emit("DONE \(result.mutations) \(result.decoded) \(result.rejected)")
    }
}
