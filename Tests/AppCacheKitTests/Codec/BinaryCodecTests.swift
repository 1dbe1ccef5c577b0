import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// The binary codec: every `Codable` shape round-trips as with JSON, models evolve as with
/// JSON, and damaged or hostile payloads are errors, never crashes.
struct BinaryCodecTests {
    private func roundTrip<T: Codable & Equatable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (payload, size) = try BinaryPayloadEncoder.encode(value)
        #expect(size > 0, sourceLocation: sourceLocation)
        let decoded = try BinaryPayloadDecoder.decode(T.self, from: payload)
        #expect(decoded == value, sourceLocation: sourceLocation)
    }

    /// Round-trips a collection the way the cache does (``PayloadCodec/encodeItems(_:)`` and
    /// ``PayloadCodec/decodeItems(_:from:)``), and checks that those bytes are the array's.
    private func roundTripItems<T: Codable & Equatable>(_ items: [T], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let payload = try PayloadCodec.binary.encodeItems(items)
        #expect(payload == (try PayloadCodec.binary.encode(items)), sourceLocation: sourceLocation)
        #expect(try PayloadCodec.binary.decodeItems(T.self, from: payload) == items, sourceLocation: sourceLocation)
        try roundTrip(items, sourceLocation: sourceLocation)
    }

    struct Scalars: Codable, Equatable {
        var bool = true
        var string = "Grüße, 東京 🍜"
        var empty = ""
        var long = String(repeating: "é", count: 300)
        var double = -0.0
        var largest = Double.greatestFiniteMagnitude
        var subnormal = Double.leastNonzeroMagnitude
        var float: Float = 3.25
        var int = Int.min
        var int8 = Int8.min
        var int16 = Int16.max
        var int32 = Int32.min
        var int64 = Int64.max
        var uint = UInt.max
        var uint8 = UInt8.max
        var uint16 = UInt16.max
        var uint32 = UInt32.max
        var uint64 = UInt64.max
        var none: Int?
        var some: String? = "x"
    }

    struct Foundations: Codable, Equatable {
        var date = Date(timeIntervalSinceReferenceDate: 700_000_000.123456)
        var url = URL(string: "https://example.com/ü/path?q=a%20b#frag")!
        var uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        var decimal = Decimal(string: "12345.6789")!
        var data = Data((0...255).map(UInt8.init))
        var dates: [Date] = [Date(timeIntervalSince1970: 0), .distantFuture]
        var optionalURL: URL?
    }

    enum Shape: Codable, Equatable {
        case point
        case circle(radius: Double)
        case rectangle(Double, Double)
        case labelled(String, nested: [Shape])
    }

    enum Level: Int, Codable { case low = 1, high = 9 }

    struct Collections: Codable, Equatable {
        var byName: [String: [Int]] = ["a": [1, 2], "ß": [], "": [3]]
        var byNumber: [Int: String] = [1: "one", -7: "minus seven"]
        var byID: [UUID: Int] = [UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!: 1]
        var nested: [[String?]] = [["a", nil], [], [nil]]
        var set: Set<Int> = [1, 5, 9]
        var shapes: [Shape] = [.point, .circle(radius: 2), .rectangle(1, 2), .labelled("x", nested: [.point])]
        var levels: [Level] = [.low, .high]
        var kinds: [FeedPost.Kind] = [.photo, .link]
        /// More keys than the decoder compares one by one: looked up by name in a dictionary.
        var manyKeys: [String: Int] = Dictionary(uniqueKeysWithValues: (0..<40).map { ("key \($0) é", $0) })
    }

    class Base: Codable {
        var name: String
        init(name: String) { self.name = name }
    }

    final class Derived: Base, Equatable, @unchecked Sendable {
        var extra: Int

        init(name: String, extra: Int) {
            self.extra = extra
            super.init(name: name)
        }

        enum CodingKeys: String, CodingKey { case extra }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            extra = try container.decode(Int.self, forKey: .extra)
            try super.init(from: container.superDecoder())
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(extra, forKey: .extra)
            try super.encode(to: container.superEncoder())
        }

        static func == (lhs: Derived, rhs: Derived) -> Bool { lhs.name == rhs.name && lhs.extra == rhs.extra }
    }

    @Test func everyStandardShapeRoundTrips() throws {
        try roundTrip(Scalars())
        try roundTrip(Foundations())
        try roundTrip(Collections())
        try roundTripItems([Derived(name: "base part", extra: 7)])
        try roundTripItems(MenuItem.sampleMenu(count: 30))
        try roundTripItems(FeedPost.sampleFeed(count: 30))
        try roundTripItems([Note.make(1), Note.make(2), Note.make(15)])
        try roundTripItems([Int]())
        try roundTrip(["just", "strings"])
        try roundTrip(Optional<Int>.none)
        try roundTrip(42)
    }

    /// JSON has no numbers that are not finite: `JSONEncoder` refuses them with an
    /// `EncodingError` at their path, and so does the binary encoder (a `try?` around one
    /// leaves the field out, as with JSON), so the cache refuses such items whatever its codec.
    @Test func numbersThatAreNotFiniteAreRefusedAsJSONRefusesThem() throws {
        func path(_ encode: () throws -> Any) -> [String]? {
            do {
                _ = try encode()
                return nil
            } catch let EncodingError.invalidValue(_, context) {
                return context.codingPath.map(\.stringValue)
            } catch {
                return ["unexpected: \(error)"]
            }
        }
        let values: [[String: [Double]]] = [["a": [1]], ["b": [2, .nan]]]
        #expect(path { try BinaryPayloadEncoder.encode(values) } == ["Index 1", "b", "Index 1"])
        #expect(path { try BinaryPayloadEncoder.encode(values) } == path { try JSONEncoder().encode(values) })
        for value in [Double.infinity, -.infinity, .nan] {
            #expect(path { try PayloadCodec.binary.encodeItems([value]) } == ["Index 0"])
        }
        #expect(path { try PayloadCodec.binary.encodeItems([Float.nan]) } == ["Index 0"])
        #expect(path { try PayloadCodec.binary.encodeItems([Date(timeIntervalSinceReferenceDate: .infinity)]) } == ["Index 0"])
    }

    /// The same values come back as JSON gives them back (URLs, dates and decimals included).
    @Test func decodesWhatJSONDecodes() throws {
        let feed = FeedPost.sampleFeed(count: 50, seed: 3)
        let viaJSON = try JSONDecoder().decode([FeedPost].self, from: JSONEncoder().encode(feed))
        let viaBinary = try BinaryPayloadDecoder.decode([FeedPost].self, from: BinaryPayloadEncoder.encode(feed).payload)
        #expect(viaBinary == viaJSON)
        #expect(viaBinary == feed)
    }

    /// Keys are written once per payload, and the payload is smaller than JSON's.
    @Test func keysAreStoredOncePerPayload() throws {
        let items = MenuItem.sampleMenu(count: 100)
        let payload = try BinaryPayloadEncoder.encode(items).payload
        let text = String(decoding: payload, as: UTF8.self)
        #expect(text.components(separatedBy: "itemDescription").count == 2)
        #expect(Double(payload.count) <= 0.75 * Double(try JSONEncoder().encode(items).count))
    }

    /// Around the number of names the encoder compares one by one before it hashes them, every
    /// name is still stored once and every value comes back under its own name.
    @Test(arguments: [15, 16, 17, 18])
    func namesAroundTheLinearLimitAreStoredOnce(count: Int) throws {
        let names = (0..<count).map { "name-\($0)-ü" }
        let records = (0..<3).map { round in Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0 * 10 + round) }) }
        let payload = try BinaryPayloadEncoder.encode(records).payload
        #expect(try BinaryPayloadDecoder.decode([[String: Int]].self, from: payload) == records)
        let text = String(decoding: payload, as: UTF8.self)
        for name in names {
            #expect(text.components(separatedBy: name).count == 2, "\(name) is in the key table once")
        }
    }

    /// An enum with associated values has a `CodingKey` type per case: twenty of them, met in
    /// turn and again, more than the coders keep at hand as recently used.
    enum ManyKeyTypes: Codable, Equatable {
        case c0(Int), c1(Int), c2(Int), c3(Int), c4(Int), c5(Int), c6(Int), c7(Int), c8(Int), c9(Int), c10(Int), c11(Int), c12(Int), c13(Int), c14(Int), c15(Int), c16(Int), c17(Int), c18(Int), c19(Int)

        static var all: [ManyKeyTypes] {
            [.c0(0), .c1(1), .c2(2), .c3(3), .c4(4), .c5(5), .c6(6), .c7(7), .c8(8), .c9(9), .c10(10), .c11(11), .c12(12), .c13(13), .c14(14), .c15(15), .c16(16), .c17(17), .c18(18), .c19(19)]
        }
    }

    @Test func moreKeyTypesThanTheLinearLimitRoundTrip() throws {
        let values = ManyKeyTypes.all + ManyKeyTypes.all.reversed()
        let payload = try BinaryPayloadEncoder.encode(values).payload
        #expect(try BinaryPayloadDecoder.decode([ManyKeyTypes].self, from: payload) == values)
        let items = try BinaryPayloadEncoder.encodeItems(values, capacityHint: 64).payload
        #expect(try BinaryPayloadDecoder.decodeItems(ManyKeyTypes.self, from: items) == values)
    }

    // MARK: - Models evolve

    struct Version1: Codable, Equatable {
        var id: Int
        var name: String
        var removed: [String]
        var price: Int
    }

    /// The same type a release later: a property removed, one added (optional), the rest
    /// reordered, one changed from `Int` to `Double`.
    struct Version2: Codable, Equatable {
        var price: Double
        var name: String
        var added: String?
        var id: Int
    }

    @Test func evolvedModelsReadOldPayloadsAsJSONWould() throws {
        let old = [Version1(id: 1, name: "Laksa", removed: ["gone"], price: 12), Version1(id: 2, name: "Pho", removed: [], price: 9)]
        let viaBinary = try BinaryPayloadDecoder.decode([Version2].self, from: BinaryPayloadEncoder.encode(old).payload)
        let viaJSON = try JSONDecoder().decode([Version2].self, from: JSONEncoder().encode(old))
        #expect(viaBinary == viaJSON)
        #expect(viaBinary == [Version2(price: 12, name: "Laksa", added: nil, id: 1), Version2(price: 9, name: "Pho", added: nil, id: 2)])
    }

    @Test func aMissingRequiredPropertyIsAnError() throws {
        struct Renamed: Codable { var identifier: Int }
        let payload = try BinaryPayloadEncoder.encode([Version1(id: 1, name: "x", removed: [], price: 1)]).payload
        #expect(throws: DecodingError.self) { try BinaryPayloadDecoder.decode([Renamed].self, from: payload) }
        struct WrongType: Codable { var name: Int }
        #expect(throws: DecodingError.self) { try BinaryPayloadDecoder.decode([WrongType].self, from: payload) }
    }

    // MARK: - Unusual encoders

    /// A type that writes into an outer container after opening a nested one, and into the
    /// nested one after that: a streaming encoder cannot, so the collection is written as JSON.
    struct Interleaving: CacheableModel, Equatable {
        var a: Int
        var b: Int

        enum Keys: String, CodingKey { case a, nested, b }
        enum Inner: String, CodingKey { case value }

        init(a: Int, b: Int) {
            self.a = a
            self.b = b
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            a = try container.decode(Int.self, forKey: .a)
            b = try container.nestedContainer(keyedBy: Inner.self, forKey: .nested).decode(Int.self, forKey: .value)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var nested = container.nestedContainer(keyedBy: Inner.self, forKey: .nested)
            try container.encode(a, forKey: .a)
            try nested.encode(b, forKey: .value)
        }
    }

    @Test func interleavedContainersFallBackToJSON() throws {
        let items = [Interleaving(a: 1, b: 2)]
        let encoded = try PayloadCodec.binary.encode(items)
        #expect(encoded.codec == .json)
        #expect(try encoded.codec.decode([Interleaving].self, from: encoded.payload) == items)
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems(items)
        try cache.cacheItems(items, forKey: "again")
        #expect(try fixture.openCache().getCachedItems(Interleaving.self) == items)
        // Told once, with what the codec met.
        #expect(fixture.diagnostics.codes == [.storedAsJSON])
        #expect(fixture.diagnostics.errors.first?.message.contains("a container written to after it was closed") == true)
    }

    /// A custom `encode(to:)` that asks for its container twice, or encodes nothing.
    @Test func repeatedAndEmptyContainersWork() throws {
        struct Twice: Codable, Equatable {
            var x: Int
            var y: Int
            enum CodingKeys: CodingKey { case x, y }
            init(x: Int, y: Int) { self.x = x; self.y = y }
            init(from decoder: any Decoder) throws {
                x = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .x)
                y = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .y)
            }
            func encode(to encoder: any Encoder) throws {
                var first = encoder.container(keyedBy: CodingKeys.self)
                try first.encode(x, forKey: .x)
                var second = encoder.container(keyedBy: CodingKeys.self)
                try second.encode(y, forKey: .y)
            }
        }
        struct Nothing: Codable, Equatable {
            init() {}
            init(from decoder: any Decoder) throws {}
            func encode(to encoder: any Encoder) throws {}
        }
        try roundTripItems([Twice(x: 1, y: 2), Twice(x: 3, y: 4)])
        try roundTripItems([Nothing(), Nothing()])
    }

    /// Containers of one key type used at the same time (a recursive model, a container nested
    /// in one of its own type, one kept past the next value's): each keeps its own place, as
    /// the codec reuses containers only once nobody holds them.
    @Test func containersOfOneKeyTypeInUseTogetherStayApart() throws {
        struct Node: Codable, Equatable {
            var name: String
            var children: [Node]
            var weight: Int
        }
        let tree = Node(name: "root", children: [
            Node(name: "a", children: [Node(name: "a1", children: [], weight: 3)], weight: 2),
            Node(name: "b", children: [], weight: 4),
        ], weight: 1)
        try roundTripItems([tree, tree])

        struct SelfNested: Codable, Equatable {
            var outer: Int
            var inner: Int
            enum CodingKeys: CodingKey { case value, child }
            init(outer: Int, inner: Int) { self.outer = outer; self.inner = inner }
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                let child = try container.nestedContainer(keyedBy: CodingKeys.self, forKey: .child)
                inner = try child.decode(Int.self, forKey: .value)
                // The outer container is read after the nested one of its own type.
                outer = try container.decode(Int.self, forKey: .value)
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                var child = container.nestedContainer(keyedBy: CodingKeys.self, forKey: .child)
                try child.encode(inner, forKey: .value)
                try container.encode(outer, forKey: .value)
            }
        }
        try roundTripItems((0..<5).map { SelfNested(outer: $0, inner: 100 + $0) })
    }

    // MARK: - 128-bit integers

    /// Every width of 128-bit integer, in every kind of container.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    struct WideIntegers: Codable, Equatable {
        var smallest = Int128.min
        var largest = Int128.max
        var unsignedLargest = UInt128.max
        var justPast64Bits = Int128(Int64.min) - 1
        var unsignedJustPast64Bits = UInt128(UInt64.max) + 1
        var small: Int128 = -5
        var unsignedSmall: UInt128 = 7
        var none: Int128?
        var some: UInt128? = UInt128.max - 1
        var list: [Int128] = [0, .max, .min, -1]
        var unsignedList: [UInt128] = [0, .max]
    }

    /// A model with `Int128` or `UInt128` properties caches with the default (binary) codec, as
    /// it does with JSON: every value round-trips, past 64 bits too.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func wideIntegersRoundTrip() throws {
        try roundTrip(WideIntegers())
        try roundTripItems([WideIntegers(), WideIntegers(small: 0, none: 3, some: nil, list: [])])
        try roundTrip(Int128.min)
        try roundTrip(UInt128.max)
        try roundTrip([Int128.max, 1])
        let viaJSON = try JSONDecoder().decode(WideIntegers.self, from: JSONEncoder().encode(WideIntegers()))
        #expect(try BinaryPayloadDecoder.decode(WideIntegers.self, from: BinaryPayloadEncoder.encode(WideIntegers()).payload) == viaJSON)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    struct WideCount: Codable, Equatable { var count: Int128 }
    struct NarrowCount: Codable, Equatable { var count: Int64 }
    struct NarrowUnsignedCount: Codable, Equatable { var count: UInt8 }
    struct FloatingCount: Codable, Equatable { var count: Double }

    /// A property widened to `Int128` reads archives written before, and a 128-bit value that
    /// fits a narrower type reads into it, as JSON's numbers do; one that does not fit is an
    /// error, never a truncated number.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func wideIntegersReadAsJSONNumbersWould() throws {
        let narrow = try BinaryPayloadEncoder.encode(NarrowCount(count: -42)).payload
        #expect(try BinaryPayloadDecoder.decode(WideCount.self, from: narrow) == WideCount(count: -42))
        // Stored as a 64-bit number when it fits: the same bytes as the narrow model's.
        #expect(try BinaryPayloadEncoder.encode(WideCount(count: -42)).payload == narrow)
        let fits = try BinaryPayloadEncoder.encode(WideCount(count: 200)).payload
        #expect(try BinaryPayloadDecoder.decode(NarrowUnsignedCount.self, from: fits) == NarrowUnsignedCount(count: 200))

        let past64Bits = try BinaryPayloadEncoder.encode(WideCount(count: Int128(Int64.max) + 1)).payload
        #expect(try BinaryPayloadDecoder.decode(FloatingCount.self, from: past64Bits) == FloatingCount(count: 0x1p63))
        for narrower in [NarrowCount.self, NarrowUnsignedCount.self] as [any Decodable.Type] {
            #expect(throws: DecodingError.self) { try BinaryPayloadDecoder.decode(narrower, from: past64Bits) }
        }
        let negative = try BinaryPayloadEncoder.encode([UInt128.max]).payload
        #expect(throws: DecodingError.self) { try BinaryPayloadDecoder.decode([Int128].self, from: negative) }
    }

    /// Every truncation and every flipped bit of a payload holding 128-bit values: errors or
    /// values, never a crash.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func damagedWideIntegersAreErrorsNeverCrashes() throws {
        let payload = try BinaryPayloadEncoder.encode([WideIntegers()]).payload
        for length in 0..<payload.count {
            #expect(throws: DecodingError.self) { try BinaryPayloadDecoder.decode([WideIntegers].self, from: payload.prefix(length)) }
        }
        var refused = 0
        for bit in 0..<(payload.count * 8) {
            var damaged = payload
            damaged[bit / 8] ^= 1 << UInt8(bit % 8)
            if (try? BinaryPayloadDecoder.decode([WideIntegers].self, from: damaged)) == nil { refused += 1 }
        }
        // Most flips land in a number's 16 bytes and leave another valid number.
        #expect(refused > 0)
    }

    // MARK: - Nesting

    /// A value nested `levels` deep: each link's `encode(to:)` runs inside the one before.
    indirect enum Chain: CacheableModel, Equatable {
        case end
        case link(Chain)

        static func nested(_ levels: Int) -> Chain {
            var chain = Chain.end
            for _ in 1..<levels { chain = .link(chain) }
            return chain
        }

        /// How many values deep it is, counted without recursion.
        var levels: Int {
            var count = 1
            var current = self
            while case .link(let inner) = current { count += 1; current = inner }
            return count
        }
    }

    /// Values nest as deep as JSON writes them: the deepest chain `JSONEncoder` encodes, the
    /// binary encoder encodes and reads back; one level deeper both refuse with an
    /// `EncodingError`; and a value nested thousands of levels deep is refused with an error
    /// rather than a stack overflow.
    @Test func nestingAsDeepAsJSONWritesRoundTripsAndDeeperIsRefusedAsJSONRefusesIt() throws {
        func jsonEncodes(_ levels: Int) -> Bool { (try? JSONEncoder().encode([Chain.nested(levels)])) != nil }
        // The deepest chain JSON writes, found by bisection (each link is two containers).
        var (low, high) = (1, 600)
        while low + 1 < high {
            let middle = (low + high) / 2
            if jsonEncodes(middle) { low = middle } else { high = middle }
        }
        let deepest = [Chain.nested(low)]
        let payload = try PayloadCodec.binary.encodeItems(deepest)
        #expect(try PayloadCodec.binary.decodeItems(Chain.self, from: payload).first?.levels == low)
        for levels in [low + 1, 5_000] {
            #expect(throws: EncodingError.self, "\(levels) levels") {
                try PayloadCodec.binary.encodeItems([Chain.nested(levels)])
            }
        }
        // The encoder is usable again after refusing.
        #expect(try PayloadCodec.binary.decodeItems(Chain.self, from: PayloadCodec.binary.encodeItems(deepest)).count == 1)
    }

    /// A type that decodes its own kind through `superDecoder(forKey:)`, as deep as the payload
    /// goes: not through the decoder's own nesting of values.
    struct SuperChain: Decodable {
        var levels: Int
        enum CodingKeys: CodingKey { case next }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            levels = container.contains(.next) ? try SuperChain(from: container.superDecoder(forKey: .next)).levels + 1 : 1
        }

        /// A payload of keyed containers `levels` deep, each holding the next under `next`,
        /// written byte by byte as a hostile file would hold it.
        static func payload(levels: Int) -> Data {
            var bytes: [UInt8] = []
            func length(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(value).littleEndian, Array.init) }
            // A container `k` levels above the innermost takes 6 bytes per level plus 5.
            for level in stride(from: levels - 1, to: 0, by: -1) {
                bytes += [BinaryFormat.keyed] + length(1 + 6 * (level - 1) + 5) + [0]
            }
            bytes += [BinaryFormat.keyed] + length(0)
            let tableOffset = bytes.count
            bytes += [1, 4] + Array("next".utf8) + length(tableOffset)
            return Data(bytes)
        }
    }

    /// A hostile payload nested thousands deep for a type that recurses through
    /// `superDecoder(forKey:)` is refused like any other too deep, not a stack overflow; one
    /// as deep as the limit decodes.
    @Test func recursionThroughSuperDecodersCountsTowardTheLimit() throws {
        #expect(try BinaryPayloadDecoder.decode(SuperChain.self, from: SuperChain.payload(levels: 3)).levels == 3)
        #expect(try BinaryPayloadDecoder.decode(SuperChain.self, from: SuperChain.payload(levels: BinaryFormat.maximumReadDepth)).levels == BinaryFormat.maximumReadDepth)
        for levels in [BinaryFormat.maximumReadDepth + 2, 300_000] {  // the deeper one overflowed the stack
            #expect(throws: DecodingError.self, "\(levels) levels") {
                try BinaryPayloadDecoder.decode(SuperChain.self, from: SuperChain.payload(levels: levels))
            }
        }
        // The levels a super decoder counted are given back: a class hierarchy decoded through
        // `superDecoder()` item after item is never taken for deep nesting.
        let many = (0..<(2 * BinaryFormat.maximumReadDepth)).map { Derived(name: "n\($0)", extra: $0) }
        #expect(try PayloadCodec.binary.decodeItems(Derived.self, from: PayloadCodec.binary.encodeItems(many)) == many)
    }

    /// A linked list that encodes its next link through `superEncoder(forKey:)`: nesting the
    /// encoder cannot see through its own values.
    final class SuperLink: Encodable, Sendable {
        let value: Int
        let next: SuperLink?
        enum CodingKeys: CodingKey { case value, next }

        init(value: Int, next: SuperLink?) {
            self.value = value
            self.next = next
        }

        static func chain(_ levels: Int) -> SuperLink {
            var link = SuperLink(value: 0, next: nil)
            for value in 1..<levels { link = SuperLink(value: value, next: link) }
            return link
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(value, forKey: .value)
            if let next { try next.encode(to: container.superEncoder(forKey: .next)) }
        }
    }

    /// The encoder counts the containers super encoders open toward the limit: a chain as deep
    /// as JSON writes round-trips; one level deeper and one thousands deep are refused with an
    /// error (before, they were cached and never read back).
    @Test func recursionThroughSuperEncodersCountsTowardTheLimit() throws {
        let deepest = try BinaryPayloadEncoder.encode(SuperLink.chain(BinaryFormat.maximumWrittenDepth)).payload
        #expect(try BinaryPayloadDecoder.decode(SuperChain.self, from: deepest).levels == BinaryFormat.maximumWrittenDepth)
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(SuperLink.chain(BinaryFormat.maximumWrittenDepth + 1)) }
        for levels in [BinaryFormat.maximumWrittenDepth + 1, 5_000] {
            #expect(throws: EncodingError.self, "\(levels) levels") {
                try BinaryPayloadEncoder.encode(SuperLink.chain(levels))
            }
        }
        // Levels are given back: a class hierarchy encoded through `superEncoder()` item
        // after item is never taken for deep nesting.
        let many = (0..<(2 * BinaryFormat.maximumReadDepth)).map { Derived(name: "n\($0)", extra: $0) }
        #expect(try PayloadCodec.binary.decodeItems(Derived.self, from: PayloadCodec.binary.encodeItems(many)) == many)
    }

    // MARK: - Hostile payloads

    /// Every truncation and every flipped bit of a payload: errors, never a crash or a hang.
    @Test func damagedPayloadsAreErrorsNeverCrashes() throws {
        let payloads = [
            try BinaryPayloadEncoder.encode(MenuItem.sampleMenu(count: 3)).payload,
            try BinaryPayloadEncoder.encode(FeedPost.sampleFeed(count: 3)).payload,
        ]
        var topBitFlips = 0
        var topBitFlipsDecoded = 0
        for payload in payloads {
            // A payload cut short loses its key table's offset: never decodable.
            for length in 0..<payload.count {
                #expect(tryDecode(payload.prefix(length)) == 0, "a payload cut to \(length) bytes decoded")
            }
            for bit in 0..<(payload.count * 8) {
                var damaged = payload
                damaged[bit / 8] ^= 1 << UInt8(bit % 8)
                let decoded = tryDecode(damaged) > 0
                if bit % 8 == 7 {
                    topBitFlips += 1
                    if decoded { topBitFlipsDecoded += 1 }
                }
            }
        }
        // A low bit flipped inside text or a number leaves a valid payload (the archive's
        // checksum is what catches those). A top bit flipped makes ASCII text ill-formed UTF-8,
        // a tag unknown or a length absurd: refused, but in a number's bytes.
        #expect(topBitFlipsDecoded < topBitFlips / 4, "\(topBitFlipsDecoded) of \(topBitFlips) payloads with a top bit flipped decoded")
    }

    /// At least 100,000 random mutations of payloads of both sample models, each decoded: no
    /// crash, no hang, and most refused (a mutation rarely leaves a valid payload).
    @Test func fuzzedPayloadsNeverCrash() throws {
        let report = PayloadFuzzer.run(mutations: 100_000, seed: 42)
        #expect(report.mutations == 100_000)
        #expect(report.decoded + report.rejected == report.mutations)
        #expect(report.rejected > report.mutations / 2)
    }

    private func tryDecode(_ payload: Data) -> Int {
        let menu = (try? BinaryPayloadDecoder.decode([MenuItem].self, from: payload)) != nil
        let feed = (try? BinaryPayloadDecoder.decode([FeedPost].self, from: payload)) != nil
        return (menu ? 1 : 0) + (feed ? 1 : 0)
    }
}
