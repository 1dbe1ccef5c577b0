import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// Hand-written `encode(to:)` code may use the encoder's containers in any order, including
/// orders a streaming encoder cannot follow (writing to a container after one nested in it was
/// closed, asking a closed container for a nested one). Whatever it does, the binary encoder
/// never crashes: it writes a payload the decoder can walk, or it throws.
struct EncoderMisuseTests {
    /// A value whose `encode(to:)` runs a random sequence of container operations, keeping
    /// every container and super encoder it was given and using old ones again at random.
    struct RandomUse: Encodable {
        let seed: UInt64
        let operations: Int

        enum Handle {
            case keyed(KeyedEncodingContainer<AnyKey>)
            case unkeyed(any UnkeyedEncodingContainer)
            case encoder(any Encoder)
        }

        func encode(to encoder: any Encoder) throws {
            var random = SeededRandom(seed: seed)
            var handles: [Handle] = [.encoder(encoder)]
            let names = ["a", "b", "c", "super"]
            for _ in 0..<operations {
                let pick = Int.random(in: 0..<handles.count, using: &random)
                let key = AnyKey(stringValue: names.randomElement(using: &random)!)
                switch handles[pick] {
                case .encoder(let encoder):
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: handles.append(.keyed(encoder.container(keyedBy: AnyKey.self)))
                    case 1: handles.append(.unkeyed(encoder.unkeyedContainer()))
                    default:
                        var single = encoder.singleValueContainer()
                        try single.encode(Int.random(in: -5...5, using: &random))
                    }
                case .keyed(var container):
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0: try container.encode(Int.random(in: -1_000...1_000, using: &random), forKey: key)
                    case 1: try container.encode("text", forKey: key)
                    case 2: handles.append(.keyed(container.nestedContainer(keyedBy: AnyKey.self, forKey: key)))
                    case 3: handles.append(.unkeyed(container.nestedUnkeyedContainer(forKey: key)))
                    case 4: handles.append(.encoder(container.superEncoder(forKey: key)))
                    default: try container.encodeNil(forKey: key)
                    }
                    handles[pick] = .keyed(container)
                case .unkeyed(var container):
                    switch Int.random(in: 0..<5, using: &random) {
                    case 0: try container.encode(Int.random(in: 0...300, using: &random))
                    case 1: handles.append(.keyed(container.nestedContainer(keyedBy: AnyKey.self)))
                    case 2: handles.append(.unkeyed(container.nestedUnkeyedContainer()))
                    case 3: handles.append(.encoder(container.superEncoder()))
                    default: try container.encode([true, false])
                    }
                    handles[pick] = .unkeyed(container)
                }
            }
        }
    }

    /// Reads whatever a payload holds, as far down as it goes.
    struct Walk: Decodable {
        init(from decoder: any Decoder) throws {
            if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
                for key in keyed.allKeys { _ = try keyed.decode(Walk.self, forKey: key) }
            } else if var unkeyed = try? decoder.unkeyedContainer() {
                while !unkeyed.isAtEnd { _ = try unkeyed.decode(Walk.self) }
            } else {
                let single = try decoder.singleValueContainer()
                if !single.decodeNil(), (try? single.decode(Int.self)) == nil {
                    _ = try? single.decode(String.self)
                }
            }
        }
    }

    @Test func anyUseOfTheContainersEncodesOrThrowsNeverCrashes() {
        var encoded = 0
        var refused = 0
        for seed in 0..<10_000 as Range<UInt64> {
            let value = [RandomUse(seed: seed, operations: 1 + Int(seed % 40))]
            guard let payload = try? BinaryPayloadEncoder.encode(value).payload else {
                refused += 1
                continue
            }
            encoded += 1
            // What was written is a payload: walking it ends, in values or an error.
            _ = try? BinaryPayloadDecoder.decode([Walk].self, from: payload)
        }
        #expect(encoded + refused == 10_000)
        #expect(encoded > 0 && refused > 0, "both kinds of use occur: \(encoded) encoded, \(refused) refused")
    }
}
