import Foundation

// Errors as JSON gives them (kind, coding path, the type or key named), coding paths as
// encoders and decoders report them, and nesting as deep as JSON reads.

/// The types of the error shapes.
enum ErrorModels {
    struct Inner: Codable, Equatable, Sendable {
        var number: Int
        var text: String
    }

    struct Outer: Codable, Equatable, Sendable {
        var inner: Inner
        var list: [Inner]
        var map: [String: Inner]
    }

    /// What ``Outer`` looks like with one wrong field, for each place it can be wrong.
    struct WrongInner: Codable, Equatable, Sendable {
        var number: String
        var text: String
    }

    struct OuterWithWrongListItem: Codable, Sendable {
        var inner: Inner
        var list: [FlexibleInner]
        var map: [String: Inner]
    }

    struct OuterWithWrongMapValue: Codable, Sendable {
        var inner: Inner
        var list: [Inner]
        var map: [String: FlexibleInner]
    }

    /// An inner value whose number may be a string.
    enum FlexibleInner: Codable, Sendable {
        case right(Inner)
        case wrong(WrongInner)

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .right(let inner): try inner.encode(to: encoder)
            case .wrong(let inner): try inner.encode(to: encoder)
            }
        }

        init(from decoder: any Decoder) throws { self = .right(try Inner(from: decoder)) }
    }

    /// Reads through hand-written nested containers and super decoders.
    struct HandWritten: Decodable, Equatable {
        var value: Int

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            let level1 = try container.nestedContainer(keyedBy: AnyCodingKey.self, forKey: AnyCodingKey("one"))
            var level2 = try level1.nestedUnkeyedContainer(forKey: AnyCodingKey("two"))
            _ = try level2.decode(Int.self)
            let level3 = try level2.nestedContainer(keyedBy: AnyCodingKey.self)
            let viaSuper = try level3.superDecoder(forKey: AnyCodingKey("three")).container(keyedBy: AnyCodingKey.self)
            value = try viaSuper.decode(Int.self, forKey: AnyCodingKey("four"))
        }
    }

    /// What ``HandWritten`` reads, with `four` of any type.
    struct HandWrittenSource<Four: Encodable & Sendable>: Encodable, Sendable {
        var four: Four?
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            var level1 = container.nestedContainer(keyedBy: AnyCodingKey.self, forKey: AnyCodingKey("one"))
            var level2 = level1.nestedUnkeyedContainer(forKey: AnyCodingKey("two"))
            try level2.encode(1)
            var level3 = level2.nestedContainer(keyedBy: AnyCodingKey.self)
            var viaSuper = level3.superEncoder(forKey: AnyCodingKey("three")).container(keyedBy: AnyCodingKey.self)
            if let four { try viaSuper.encode(four, forKey: AnyCodingKey("four")) }
        }
    }

    /// An enum with associated values, synthesized.
    enum Shape: Codable, Equatable, Sendable {
        case circle(radius: Double)
        case rectangle(width: Double, height: Double)
        case labelled(String, tag: Int)
        case empty
    }

    /// The same enum's stored forms with something wrong in them.
    struct ShapeHolder: Codable, Equatable, Sendable {
        var shapes: [Shape]
    }

    /// Validates its fields and throws `DecodingError`s built from its containers' paths.
    struct Validated: Decodable, Equatable {
        var percent: Int
        var code: String

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            percent = try container.decode(Int.self, forKey: AnyCodingKey("percent"))
            guard (0...100).contains(percent) else {
                throw DecodingError.dataCorruptedError(forKey: AnyCodingKey("percent"), in: container, debugDescription: "out of range")
            }
            let single = try container.superDecoder(forKey: AnyCodingKey("code")).singleValueContainer()
            code = try single.decode(String.self)
            guard code.count == 3 else { throw DecodingError.dataCorruptedError(in: single, debugDescription: "not three letters") }
        }
    }

    struct ValidatedSource: Encodable, Sendable {
        var percent: Int
        var code: String
    }

    /// Records the coding paths its encoder and containers report, into what it writes.
    struct EncoderPaths: Encodable, Sendable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            try container.encode(Self.names(encoder.codingPath), forKey: AnyCodingKey("encoder"))
            try container.encode(Self.names(container.codingPath), forKey: AnyCodingKey("keyed"))
            var nested = container.nestedContainer(keyedBy: AnyCodingKey.self, forKey: AnyCodingKey("nested"))
            try nested.encode(Self.names(nested.codingPath), forKey: AnyCodingKey("path"))
            var list = nested.nestedUnkeyedContainer(forKey: AnyCodingKey("list"))
            try list.encode(Self.names(list.codingPath))
            var inList = list.nestedContainer(keyedBy: AnyCodingKey.self)
            try inList.encode(Self.names(inList.codingPath), forKey: AnyCodingKey("path"))
            let superEncoder = container.superEncoder(forKey: AnyCodingKey("sup"))
            var single = superEncoder.singleValueContainer()
            try single.encode(Self.names(superEncoder.codingPath) + Self.names(single.codingPath))
        }

        static func names(_ path: [any CodingKey]) -> [String] {
            path.map { key in key.intValue.map { "\(key.stringValue)#\($0)" } ?? key.stringValue }
        }
    }

    /// Where ``EncoderPaths`` sits in a larger value.
    struct PathHolder: Encodable, Sendable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            try container.encode(EncoderPaths(), forKey: AnyCodingKey("top"))
            try container.encode([EncoderPaths(), EncoderPaths()], forKey: AnyCodingKey("many"))
            try container.encode(["k": EncoderPaths()], forKey: AnyCodingKey("map"))
            try container.encode(Field(EncoderPathsWrapper()), forKey: AnyCodingKey("wrapped"))
        }
    }

    /// A single-value wrapper around ``EncoderPaths``.
    struct EncoderPathsWrapper: Codable, Equatable, Sendable {
        init() {}
        init(from decoder: any Decoder) throws {}
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(EncoderPaths())
        }
    }

    /// Records the coding paths its decoder and containers report.
    struct DecoderPaths: Decodable, Equatable {
        var paths: [[String]]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            paths = [EncoderPaths.names(decoder.codingPath), EncoderPaths.names(container.codingPath)]
            if let nested = try? container.nestedContainer(keyedBy: AnyCodingKey.self, forKey: AnyCodingKey("nested")) {
                paths.append(EncoderPaths.names(nested.codingPath))
                if var list = try? nested.nestedUnkeyedContainer(forKey: AnyCodingKey("list")) {
                    paths.append(EncoderPaths.names(list.codingPath))
                    _ = try? list.decode([String].self)
                    if let inList = try? list.nestedContainer(keyedBy: AnyCodingKey.self) { paths.append(EncoderPaths.names(inList.codingPath)) }
                }
            }
            if let superDecoder = try? container.superDecoder(forKey: AnyCodingKey("sup")) {
                paths.append(EncoderPaths.names(superDecoder.codingPath))
                paths.append(EncoderPaths.names(try superDecoder.singleValueContainer().codingPath))
            }
        }
    }

    struct DecoderPathsHolder: Decodable, Equatable {
        var top: DecoderPaths
        var many: [DecoderPaths]
        var map: [String: DecoderPaths]
    }

    /// A chain of values, each a single-value wrapper around a struct holding the next.
    indirect enum Chain: Codable, Equatable, Sendable {
        case end
        case link(Wrapper)

        struct Wrapper: Codable, Equatable, Sendable {
            var next: Chain
            init(next: Chain) { self.next = next }
            init(from decoder: any Decoder) throws { next = try decoder.singleValueContainer().decode(Chain.self) }
            func encode(to encoder: any Encoder) throws {
                var single = encoder.singleValueContainer()
                try single.encode(next)
            }
        }

        static func levels(_ count: Int) -> Chain {
            var chain = Chain.end
            for _ in 0..<count { chain = .link(Wrapper(next: chain)) }
            return chain
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            if let next = try container.decodeIfPresent(Wrapper.self, forKey: AnyCodingKey("link")) {
                self = .link(next)
            } else {
                self = .end
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            if case .link(let next) = self { try container.encode(next, forKey: AnyCodingKey("link")) }
        }
    }

    /// Arrays nested in arrays, `levels` deep.
    struct NestedArrays: Codable, Equatable, Sendable {
        var levels: Int

        init(levels: Int) { self.levels = levels }

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            var depth = 1
            while !container.isAtEnd {
                container = try container.nestedUnkeyedContainer()
                depth += 1
            }
            levels = depth
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            for _ in 1..<levels { container = container.nestedUnkeyedContainer() }
        }
    }

    /// Reads past the end of an array, and `nil` where there is none.
    struct PastTheEnd: Decodable, Equatable {
        var outcome: [String]

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            outcome = ["count \(container.count ?? -1)"]
            while !container.isAtEnd { outcome.append(String(try container.decode(Int.self))) }
            outcome.append("at end \(container.isAtEnd) index \(container.currentIndex)")
            _ = try container.decode(Int.self)
        }
    }

    struct NilChecks: Decodable, Equatable {
        var answers: [Bool]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            answers = [
                try container.decodeNil(forKey: AnyCodingKey("none")),
                try container.decodeNil(forKey: AnyCodingKey("some")),
                container.contains(AnyCodingKey("none")),
                container.contains(AnyCodingKey("missing")),
            ]
            _ = try container.decodeNil(forKey: AnyCodingKey("missing"))
        }
    }
}

extension ConformanceShapes {
    typealias E = ErrorModels

    static let errors: [CodableShape] = missingValues + mismatches + paths + codingPaths + depths

    static let missingValues: [CodableShape] = [
        .roundTrip("error: nil read as a struct", Field(E.Inner?.none), as: Field<E.Inner>.self),
        .roundTrip("error: nil read as an array", Field([E.Inner]?.none), as: Field<[E.Inner]>.self),
        .roundTrip("error: nil read as a dictionary", Field([String: Int]?.none), as: Field<[String: Int]>.self),
        .roundTrip("error: nil read as a Bool", Field(Bool?.none), as: Field<Bool>.self),
        .roundTrip("error: nil read as a Double", Field(Double?.none), as: Field<Double>.self),
        .roundTrip("error: nil read as a Float", Field(Float?.none), as: Field<Float>.self),
        .roundTrip("error: nil read as an Int8", Field(Int8?.none), as: Field<Int8>.self),
        .roundTrip("error: nil read as a UInt64", Field(UInt64?.none), as: Field<UInt64>.self),
        .roundTrip("error: nil read as an enum", Field(Kind?.none), as: Field<Kind>.self),
        .roundTrip("error: nil read as a [String]", Field([String]?.none), as: Field<[String]>.self),
        .roundTrip("error: nil element read as an Int", [1, nil, 3] as [Int?], as: [Int].self),
        .roundTrip("error: nil element read as a String", ["a", nil] as [String?], as: [String].self),
        .roundTrip("error: nil dictionary value read as an Int", ["a": Int?.none], as: [String: Int].self),
        .roundTrip("error: a missing key", Field(1), as: E.Inner.self),
        .roundTrip("error: a missing key in a nested struct", Field(Field(1)), as: Field<E.Inner>.self),
        .roundTrip("error: decodeNil and contains, then decodeNil of a missing key", ["none": Int?.none, "some": 1], as: E.NilChecks.self),
        .roundTrip("error: reading past the end of an array", [1, 2], as: E.PastTheEnd.self),
        .roundTrip("error: nil at the top read as an Int", Int?.none, as: Int.self),
    ]

    static let mismatches: [CodableShape] = [
        .roundTrip("error: a String read as Decimal", Field("19.99"), as: Field<Decimal>.self),
        .roundTrip("error: an array read as a struct", Field([1, 2]), as: Field<E.Inner>.self),
        .roundTrip("error: a struct read as an array", Field(E.Inner(number: 1, text: "a")), as: Field<[Int]>.self),
        .roundTrip("error: a String read as a struct", Field("x"), as: Field<E.Inner>.self),
        .roundTrip("error: a Double read as a String", Field(1.5), as: Field<String>.self),
        .roundTrip("error: a Bool read as a Double", Field(true), as: Field<Double>.self),
        .roundTrip("error: an array of Strings read as [Int]", Field(["a"]), as: Field<[Int]>.self),
        .roundTrip("error: [Int] read as [String]", Field([1]), as: Field<[String]>.self),
        .roundTrip("error: a struct read as [String]", Field(Field(1)), as: Field<[String]>.self),
        .roundTrip("error: Data read as a struct", Field(Data([1])), as: Field<E.Inner>.self),
        .roundTrip("error: a URL String that does not parse", Field("http://[::1"), as: Field<URL>.self),
    ]

    static let paths: [CodableShape] = [
        .roundTrip("path: a wrong field in a nested struct",
                   Field(E.WrongInner(number: "one", text: "t")), as: Field<E.Inner>.self),
        .roundTrip("path: a wrong field in an array element",
                   E.OuterWithWrongListItem(inner: E.Inner(number: 1, text: "a"),
                                            list: [.right(E.Inner(number: 2, text: "b")), .wrong(E.WrongInner(number: "x", text: "c"))], map: [:]),
                   as: E.Outer.self),
        .roundTrip("path: a wrong field in a dictionary value",
                   E.OuterWithWrongMapValue(inner: E.Inner(number: 1, text: "a"), list: [],
                                            map: ["key": .wrong(E.WrongInner(number: "x", text: "c"))]),
                   as: E.Outer.self),
        .roundTrip("path: through nested containers and a super decoder", E.HandWrittenSource(four: "four"), as: E.HandWritten.self),
        .roundTrip("path: a missing key under nested containers and a super decoder", E.HandWrittenSource<Int>(four: nil), as: E.HandWritten.self),
        .roundTrip("path: through nested containers and a super decoder, right", E.HandWrittenSource(four: 4), as: E.HandWritten.self),
        .roundTrip("path: an enum's associated values",
                   E.ShapeHolder(shapes: [.circle(radius: 1), .rectangle(width: 2, height: 3), .labelled("l", tag: 4), .empty])),
        .roundTrip("path: a wrong associated value",
                   ["shapes": [["circle": ["radius": "big"]]]], as: E.ShapeHolder.self),
        .roundTrip("path: a missing associated value",
                   ["shapes": [["rectangle": ["width": 1.0]]]], as: E.ShapeHolder.self),
        .roundTrip("path: an unnamed associated value of the wrong type",
                   ["shapes": [["labelled": ["_0": 5, "tag": 4]]]], as: E.ShapeHolder.self),
        .roundTrip("path: an unknown enum case", ["shapes": [["triangle": [String: Int]()]]], as: E.ShapeHolder.self),
        .roundTrip("path: two enum cases at once", ["shapes": [["empty": [String: Int](), "circle": ["radius": 1]]]], as: E.ShapeHolder.self),
        .roundTrip("path: errors a model builds from its containers", E.ValidatedSource(percent: 50, code: "abc"), as: E.Validated.self),
        .roundTrip("path: an error a model builds from a keyed container", E.ValidatedSource(percent: 150, code: "abc"), as: E.Validated.self),
        .roundTrip("path: an error a model builds from a single value container", [E.ValidatedSource(percent: 1, code: "abcd")], as: [E.Validated].self),
        .roundTrip("path: a number that does not fit, deep inside", [Field([Field(300)])], as: [Field<[Field<Int8>]>].self),
        .roundTrip("path: an invalid UUID, deep inside", ["a": [Field("nope")]], as: [String: [Field<UUID>]].self),
        .roundTrip("path: invalid base64, deep inside", ["a": [Field("!")]], as: [String: [Field<Data>]].self),
    ]

    static let codingPaths: [CodableShape] = [
        .roundTrip("coding path: what encoders and their containers report", E.PathHolder(), as: PathReading.self),
        .roundTrip("coding path: what decoders and their containers report", E.PathHolder(), as: E.DecoderPathsHolder.self),
    ]

    /// Reads what ``ErrorModels/PathHolder`` wrote.
    struct PathReading: Decodable, Equatable {
        struct Paths: Decodable, Equatable {
            var encoder: [String]
            var keyed: [String]
            var nested: [String: AnyCodable]
            var sup: [String]
        }
        var top: Paths
        var many: [Paths]
        var map: [String: Paths]
        var wrapped: Wrapped

        struct Wrapped: Decodable, Equatable {
            var value: Paths
        }
    }

    /// Any value made of strings and arrays and dictionaries of them.
    indirect enum AnyCodable: Decodable, Equatable {
        case string(String)
        case list([AnyCodable])
        case map([String: AnyCodable])

        init(from decoder: any Decoder) throws {
            if let string = try? decoder.singleValueContainer().decode(String.self) {
                self = .string(string)
            } else if let list = try? [AnyCodable](from: decoder) {
                self = .list(list)
            } else {
                self = .map(try [String: AnyCodable](from: decoder))
            }
        }
    }

    static let depths: [CodableShape] = [
        .roundTrip("depth: 200 single-value wrappers around structs", E.Chain.levels(200)),
        .roundTrip("depth: 255 single-value wrappers around structs", E.Chain.levels(255)),
        .roundTrip("depth: 300 single-value wrappers around structs", E.Chain.levels(300)),
        .roundTrip("depth: 509 single-value wrappers around structs", E.Chain.levels(509)),
        .roundTrip("depth: 510 single-value wrappers around structs", E.Chain.levels(510)),
        .roundTrip("depth: 511 single-value wrappers around structs", E.Chain.levels(511)),
        .roundTrip("depth: 512 single-value wrappers around structs", E.Chain.levels(512)),
        .roundTrip("depth: 510 nested arrays", E.NestedArrays(levels: 510)),
        .roundTrip("depth: 511 nested arrays", E.NestedArrays(levels: 511)),
        .roundTrip("depth: 512 nested arrays", E.NestedArrays(levels: 512)),
    ]
}
