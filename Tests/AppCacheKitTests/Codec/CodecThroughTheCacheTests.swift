import Foundation
import Testing
@testable import AppCacheKit

/// The conformance shapes' hardest cases, this time through the cache itself: `cacheItems`,
/// a fresh instance on the same root, `getCachedItems`, with the default binary codec, give
/// back what the same steps give with `payloadCodec = .json`, in both disk layouts (an archive
/// file per collection, and small collections packed). The fresh instance reads the archive
/// from disk, decoding in the read's own buffer, which a model that keeps its container must
/// not outlive.
struct CodecThroughTheCacheTests {
    /// What `Written` items read back as `Read` through a cache with `codec`, from a fresh
    /// instance, in the packed layout or with a file per archive.
    private func throughTheCache<Written: CacheableModel, Read: CacheableModel>(
        _ items: [Written], as read: Read.Type, codec: PayloadCodec, packed: Bool
    ) throws -> [Read]? {
        let fixture = try Fixture(layout: packed ? .production : .filePerCollection)
        var configuration = fixture.configuration()
        configuration.payloadCodec = codec
        try AppCache(configuration: configuration).cacheItems(items)
        return try AppCache(configuration: configuration).getCachedItems(Read.self)
    }

    /// Checks that the binary codec gives back, through the cache, what JSON gives.
    private func expectSameAsJSON<Written: CacheableModel, Read: CacheableModel & Equatable>(
        _ items: [Written], as read: Read.Type, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for packed in [false, true] {
            let json = try throughTheCache(items, as: read, codec: .json, packed: packed)
            let binary = try throughTheCache(items, as: read, codec: .binary, packed: packed)
            #expect(json != nil, "JSON reads the items back", sourceLocation: sourceLocation)
            #expect(binary == json, "packed: \(packed)", sourceLocation: sourceLocation)
        }
    }

    @Test func classHierarchiesThroughSuperEncodersReadBackAsWithJSON() throws {
        try expectSameAsJSON([Car(doors: 2), Car(doors: 5)], as: Car.self)
        try expectSameAsJSON([Bike(gears: 21)], as: Bike.self)
        try expectSameAsJSON([Train(cars: 3)], as: Train.self)
        try expectSameAsJSON([Van(seats: 7)], as: Van.self)
        try expectSameAsJSON([Puppy(name: "Rex", ageInWeeks: 9)], as: Puppy.self)
        try expectSameAsJSON([MisuseModels.UnusedSuper(value: 5)], as: MisuseModels.UnusedSuper.self)
        try expectSameAsJSON([MisuseModels.SuperValues(number: 4, list: ["a"], deep: "d")], as: MisuseModels.SuperValues.self)
    }

    @Test func changedPropertyTypesReadBackAsWithJSON() throws {
        try expectSameAsJSON([Reading(value: Float(0.1)), Reading(value: Float(19.99))], as: DoubleReading.self)
        try expectSameAsJSON([Price(amount: 19.99)], as: DecimalPrice.self)
        try expectSameAsJSON([DecimalPrice(amount: Decimal(string: "12.5")!)], as: Price.self)
        try expectSameAsJSON([Link(url: URL(string: "https://example.com/a")!, id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)], as: TextLink.self)
    }

    @Test func keysSpelledInAnotherNormalisationFormReadBackAsWithJSON() throws {
        try expectSameAsJSON([Decomposed(value: 1)], as: Precomposed.self)
    }

    /// A model that keeps its decoding container and reads it only when asked: the archive's
    /// read buffer is gone by then, the decoder's copy of it is not.
    @Test func aContainerKeptPastInitFromReadsBackAsWithJSON() throws {
        try expectSameAsJSON([LazyNote(text: "kept"), LazyNote(text: "längst")], as: LazyNote.self)
    }

    /// A model the binary codec cannot stream (a container written to after one nested in it
    /// was closed) is stored as JSON and reads back as with JSON.
    @Test func aModelLeftToJSONReadsBackAsWithJSON() throws {
        try expectSameAsJSON([LateSuper()], as: LateSuperReading.self)
    }

    /// One JSON decoder serves every `.json` read: reads from many threads at once each give
    /// back their own collection, and one whose payload does not decode as the model asked
    /// for misses alone, told as a model mismatch.
    @Test func jsonReadsFromManyThreadsAtOnceEachGetTheirOwnItems() throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.payloadCodec = .json
        let cache = try AppCache(configuration: configuration)
        let collections = (0..<6).map { worker in (0..<20).map { Note.make(worker * 100 + $0) } }
        for (worker, notes) in collections.enumerated() { try cache.cacheItems(notes, forKey: "k\(worker)") }
        try cache.cacheItems([Reading(value: 1.5)], forKey: "reading")
        let wrong = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: collections.count + 1) { worker in
            guard worker < collections.count else {
                // A number read as text: a miss, told as a model mismatch.
                do {
                    if let read = try cache.getCachedItems(TextReading.self, forKey: "reading") {
                        wrong.withLock { $0.append("a reading read as text: \(read.map(\.value))") }
                    }
                } catch {
                    wrong.withLock { $0.append("reading: \(error)") }
                }
                return
            }
            for _ in 0..<25 {
                do {
                    let read = try cache.getCachedItems(Note.self, forKey: "k\(worker)")
                    if read != collections[worker] { wrong.withLock { $0.append("k\(worker): \(read?.count ?? -1) notes, not its own") } }
                } catch {
                    wrong.withLock { $0.append("k\(worker): \(error)") }
                }
            }
        }
        #expect(wrong.withLock { $0 } == [])
        #expect(fixture.diagnostics.codes == [.modelMismatch])
    }

    // MARK: - Models

    typealias Car = MisuseModels.Car
    typealias Bike = MisuseModels.Bike
    typealias Train = MisuseModels.Train
    typealias Van = MisuseModels.Van
    typealias Puppy = MisuseModels.Puppy

    struct Reading: CacheableModel { var value: Float; static var cacheName: String { "Readings" } }
    struct DoubleReading: CacheableModel, Equatable { var value: Double; static var cacheName: String { "Readings" } }
    struct TextReading: CacheableModel { var value: String; static var cacheName: String { "Readings" } }
    struct Price: CacheableModel, Equatable { var amount: Double; static var cacheName: String { "Prices" } }
    struct DecimalPrice: CacheableModel, Equatable { var amount: Decimal; static var cacheName: String { "Prices" } }
    struct Link: CacheableModel { var url: URL; var id: UUID; static var cacheName: String { "Links" } }
    struct TextLink: CacheableModel, Equatable { var url: String; var id: String; static var cacheName: String { "Links" } }

    struct Decomposed: CacheableModel {
        var value: Int
        enum CodingKeys: String, CodingKey { case value = "cafe\u{301}" }
        static var cacheName: String { "Cafés" }
    }

    struct Precomposed: CacheableModel, Equatable {
        var value: Int
        enum CodingKeys: String, CodingKey { case value = "caf\u{E9}" }
        static var cacheName: String { "Cafés" }
    }

    /// Keeps its keyed container and reads `text` from it when compared.
    struct LazyNote: CacheableModel, Equatable {
        private let kept: Kept
        private let written: String?

        init(text: String) {
            kept = Kept(container: nil)
            written = text
        }

        var text: String? { written ?? (try? kept.container?.decode(String.self, forKey: .text)) }

        enum CodingKeys: String, CodingKey { case text }

        init(from decoder: any Decoder) throws {
            kept = Kept(container: try decoder.container(keyedBy: CodingKeys.self))
            written = nil
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(text, forKey: .text)
        }

        static func == (lhs: LazyNote, rhs: LazyNote) -> Bool { lhs.text == rhs.text }

        struct Kept: @unchecked Sendable {
            let container: KeyedDecodingContainer<CodingKeys>?
        }
    }

    /// Writes its container after a super encoder's was closed: left to JSON.
    struct LateSuper: CacheableModel {
        enum CodingKeys: String, CodingKey { case first, late }

        init() {}
        init(from decoder: any Decoder) throws {}

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            var nested = container.nestedUnkeyedContainer(forKey: .first)
            try container.encode(1, forKey: .late)
            try nested.encode(2)
        }

        static var cacheName: String { "Lates" }
    }

    struct LateSuperReading: CacheableModel, Equatable {
        var first: [Int]
        var late: Int
        static var cacheName: String { "Lates" }
    }
}

extension MisuseModels.Car: CacheableModel {}
extension MisuseModels.Bike: CacheableModel {}
extension MisuseModels.Train: CacheableModel {}
extension MisuseModels.Van: CacheableModel {}
extension MisuseModels.Puppy: CacheableModel {}
extension MisuseModels.UnusedSuper: CacheableModel {}
extension MisuseModels.SuperValues: CacheableModel {}
