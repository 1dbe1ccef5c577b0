import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// The decoder's side: `init(from:)` code that keeps containers and super decoders and uses
/// them again in any order, over real payloads, gets values or errors, never a crash.
struct DecoderMisuseTests {
    struct RandomRead: Decodable {
        static let seeds = Locked<SeededRandom>(SeededRandom(seed: 7))
        /// How many uses answered with a value and how many with a `DecodingError`.
        static let outcomes = Locked<(answered: Int, refused: Int)>((0, 0))

        enum Handle {
            case keyed(KeyedDecodingContainer<AnyKey>)
            case unkeyed(any UnkeyedDecodingContainer)
            case decoder(any Decoder)
        }

        init(from decoder: any Decoder) throws {
            var random = Self.seeds.withLock { seeds in SeededRandom(seed: seeds.next()) }
            var handles: [Handle] = [.decoder(decoder)]
            let names = ["id", "name", "price", "tags", "author", "super", "x"]
            for _ in 0..<Int.random(in: 1...40, using: &random) {
                let pick = Int.random(in: 0..<handles.count, using: &random)
                let key = AnyKey(stringValue: names.randomElement(using: &random)!)
                do {
                    switch handles[pick] {
                    case .decoder(let decoder):
                        switch Int.random(in: 0..<3, using: &random) {
                        case 0: handles.append(.keyed(try decoder.container(keyedBy: AnyKey.self)))
                        case 1: handles.append(.unkeyed(try decoder.unkeyedContainer()))
                        default: _ = try decoder.singleValueContainer().decode(String.self)
                        }
                    case .keyed(let container):
                        switch Int.random(in: 0..<7, using: &random) {
                        case 0: _ = try container.decode(Int.self, forKey: key)
                        case 1: _ = try container.decodeIfPresent(String.self, forKey: key)
                        case 2: handles.append(.keyed(try container.nestedContainer(keyedBy: AnyKey.self, forKey: key)))
                        case 3: handles.append(.unkeyed(try container.nestedUnkeyedContainer(forKey: key)))
                        case 4: handles.append(.decoder(try container.superDecoder(forKey: key)))
                        case 5: _ = container.allKeys.count + (container.contains(key) ? 1 : 0)
                        default: _ = try container.decode(RandomRead.self, forKey: key)
                        }
                    case .unkeyed(var container):
                        switch Int.random(in: 0..<5, using: &random) {
                        case 0: _ = try container.decode(Double.self)
                        case 1: handles.append(.keyed(try container.nestedContainer(keyedBy: AnyKey.self)))
                        case 2: handles.append(.unkeyed(try container.nestedUnkeyedContainer()))
                        case 3: handles.append(.decoder(try container.superDecoder()))
                        default: _ = (container.count ?? 0) + (try container.decodeNil() ? 1 : 0)
                        }
                        handles[pick] = .unkeyed(container)
                    }
                    Self.outcomes.withLock { $0.answered += 1 }
                } catch is DecodingError {
                    Self.outcomes.withLock { $0.refused += 1 }
                }
            }
        }
    }

    @Test func anyUseOfTheContainersDecodesOrThrowsNeverCrashes() throws {
        let payloads = [
            try PayloadCodec.binary.encodeItems(MenuItem.sampleMenu(count: 20)),
            try PayloadCodec.binary.encodeItems(FeedPost.sampleFeed(count: 10)),
        ]
        for round in 0..<300 {
            // Every misuse inside an item is answered with a value or a DecodingError the item
            // catches, so each whole payload decodes.
            let items = try BinaryPayloadDecoder.decode([RandomRead].self, from: payloads[round % 2])
            #expect(items.count == (round % 2 == 0 ? 20 : 10))
        }
        let outcomes = RandomRead.outcomes.withLock { $0 }
        #expect(outcomes.answered > 0 && outcomes.refused > 0, "both kinds of answer occur: \(outcomes)")
    }
}
