import AppCacheKit
import Foundation
import MenuModel

/// The binary codec beside `JSONEncoder`/`JSONDecoder`, and a disk hit with each.
extension Scenarios {
    func codec() throws {
        try codec(MenuItem.sampleMenu(count: 100), name: "100 MenuItems")
        try codec(FeedPost.sampleFeed(count: 100), name: "100 FeedPosts (UUID, Date, nested URL?, enum, [String], Int?, non-ASCII)")
    }

    private func codec<Model: CacheableModel>(_ items: [Model], name: String) throws {
        let iterations = quick ? 20 : 200
        let binaryPayload = try PayloadCodec.binary.encodeItems(items)
        let jsonPayload = try JSONEncoder().encode(items)
        let encode = Measurement.paired(
            runs: runs, iterations: iterations, subject: { try? PayloadCodec.binary.encodeItems(items) },
            baseline: { try? JSONEncoder().encode(items) })
        report.add(
            "codec-encode: \(name)", subject: ("PayloadCodec.binary.encodeItems", encode.subject),
            baselines: [("JSONEncoder.encode", encode.baseline)], goal: ("JSONEncoder.encode", 0.125),
            pairedRatios: ["JSONEncoder.encode": encode.ratio])
        let decode = Measurement.paired(
            runs: runs, iterations: iterations, subject: { try? PayloadCodec.binary.decodeItems(Model.self, from: binaryPayload) },
            baseline: { try? JSONDecoder().decode([Model].self, from: jsonPayload) })
        report.add(
            "codec-decode: \(name)", subject: ("PayloadCodec.binary.decodeItems", decode.subject),
            baselines: [("JSONDecoder.decode", decode.baseline)], goal: ("JSONDecoder.decode", 0.2),
            pairedRatios: ["JSONDecoder.decode": decode.ratio])
        report.addValue(
            "codec-bytes: \(name)", subject: "binary payload", unit: "B", value: Double(binaryPayload.count),
            baseline: ("JSON", Double(jsonPayload.count)), goal: 0.75)
    }
}
