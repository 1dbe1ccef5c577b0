import AppCacheKit
import Foundation
import MenuModel

/// The binary codec beside `JSONEncoder`/`JSONDecoder`, and a disk hit with each.
extension Scenarios {
    func codec() throws {
        try codec(MenuItem.sampleMenu(count: 100), name: "100 MenuItems")
        try codec(FeedPost.sampleFeed(count: 100), name: "100 FeedPosts (UUID, Date, nested URL?, enum, [String], Int?, non-ASCII)")
        try codec(Status.sampleTimeline(count: 100), name: "100 Mastodon statuses (account, media, card, poll: 4 KB of JSON each)")
        // A small collection (a profile, a settings record): here the coders' own set-up
        // weighs more than the fields. No goal; what `cacheItems` and a disk hit of one item
        // spend in the codec.
        try codec(MenuItem.sampleMenu(count: 1), name: "1 MenuItem", goals: false)
    }

    private func codec<Model: CacheableModel>(_ items: [Model], name: String, goals: Bool = true) throws {
        let iterations = (quick ? 20 : 200) * (goals ? 1 : 20)
        let binaryPayload = try PayloadCodec.binary.encodeItems(items)
        let jsonPayload = try JSONEncoder().encode(items)
        let encode = Measurement.paired(
            runs: runs, iterations: iterations, subject: { try? PayloadCodec.binary.encodeItems(items) },
            baseline: { try? JSONEncoder().encode(items) })
        report.add(
            "codec-encode: \(name)", subject: ("PayloadCodec.binary.encodeItems", encode.subject),
            baselines: [("JSONEncoder.encode", encode.baseline)], goal: goals ? ("JSONEncoder.encode", 0.15) : nil,
            pairedRatios: ["JSONEncoder.encode": encode.ratio])
        let decode = Measurement.paired(
            runs: runs, iterations: iterations, subject: { try? PayloadCodec.binary.decodeItems(Model.self, from: binaryPayload) },
            baseline: { try? JSONDecoder().decode([Model].self, from: jsonPayload) })
        report.add(
            "codec-decode: \(name)", subject: ("PayloadCodec.binary.decodeItems", decode.subject),
            baselines: [("JSONDecoder.decode", decode.baseline)], goal: goals ? ("JSONDecoder.decode", 0.25) : nil,
            pairedRatios: ["JSONDecoder.decode": decode.ratio])
        guard goals else { return }
        report.addValue(
            "codec-bytes: \(name)", subject: "binary payload", unit: "B", value: Double(binaryPayload.count),
            baseline: ("JSON", Double(jsonPayload.count)), goal: 0.75)
    }
}
