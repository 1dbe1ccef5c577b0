import AppCacheKit
import Foundation

/// Mutates binary payloads of both sample models at random and decodes each: the decoder must
/// reject (or, when the damage happens to leave a valid payload, accept) every one, never
/// crash, hang or allocate beyond a small multiple of the payload. The tests run it briefly,
/// `appcache-torture --modes fuzz` at length.
public enum PayloadFuzzer {
    /// What a run did.
    public struct Report: Sendable, Equatable {
        /// Payloads mutated and decoded.
        public var mutations = 0
        /// Those that still decoded.
        public var decoded = 0
        /// Those the decoder refused with an error.
        public var rejected = 0
    }

    /// Decodes `mutations` mutated payloads (each one to four mutations of a payload of five
    /// `MenuItem`s or five `FeedPost`s, alternately), the same ones for the same `seed`.
    ///
    /// - Complexity: O(`mutations`).
    public static func run(mutations: Int, seed: UInt64) -> Report {
        var random = SeededRandom(seed: seed)
        let menu = (try? PayloadCodec.binary.encodeItems(MenuItem.sampleMenu(count: 5))) ?? Data()
        let feed = (try? PayloadCodec.binary.encodeItems(FeedPost.sampleFeed(count: 5))) ?? Data()
        var report = Report()
        for round in 0..<mutations {
            let isMenu = round.isMultiple(of: 2)
            var bytes = [UInt8](isMenu ? menu : feed)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                mutate(&bytes, &random)
            }
            let payload = Data(bytes)
            let decoded = isMenu
                ? (try? PayloadCodec.binary.decodeItems(MenuItem.self, from: payload)) != nil
                : (try? PayloadCodec.binary.decodeItems(FeedPost.self, from: payload)) != nil
            report.mutations += 1
            if decoded { report.decoded += 1 } else { report.rejected += 1 }
        }
        return report
    }

    /// One mutation: a bit flipped, a byte replaced, bytes inserted, removed or repeated, the
    /// payload cut short, or four bytes made into a huge length or count.
    private static func mutate(_ bytes: inout [UInt8], _ random: inout SeededRandom) {
        guard !bytes.isEmpty else {
            bytes = [UInt8.random(in: .min ... .max, using: &random)]
            return
        }
        let at = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<7, using: &random) {
        case 0: bytes[at] ^= 1 << UInt8.random(in: 0..<8, using: &random)
        case 1: bytes[at] = UInt8.random(in: .min ... .max, using: &random)
        case 2: bytes.insert(contentsOf: (0..<Int.random(in: 1...8, using: &random)).map { _ in UInt8.random(in: .min ... .max, using: &random) }, at: at)
        case 3: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...16, using: &random)))
        case 4:
            for (offset, byte) in [0xFF, 0xFF, 0xFF, 0x7F].enumerated() where at + offset < bytes.count { bytes[at + offset] = UInt8(byte) }
        case 5: bytes.removeSubrange(at...)
        default:
            let end = min(bytes.count, at + Int.random(in: 1...32, using: &random))
            bytes.insert(contentsOf: bytes[at..<end], at: at)
        }
    }
}
