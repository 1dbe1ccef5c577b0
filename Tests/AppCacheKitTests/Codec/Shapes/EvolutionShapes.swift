import Foundation

// Model evolution: a collection written with one property type and read with another reads
// the value JSON would give for every pair JSON accepts, and fails where JSON fails.

/// A model with one property, `value`, of any type: written as one `Field`, read as another.
struct Field<Value: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

extension ConformanceShapes {
    private static func evolve<Old: Codable & Equatable & Sendable, New: Codable & Equatable & Sendable>(
        _ name: String, _ value: Old, as new: New.Type
    ) -> CodableShape {
        .roundTrip("evolution: \(name)", Field(value), as: Field<New>.self)
    }

    static let evolution: [CodableShape] = floatingPoint + integers + decimals + dates + identifiers + optionals + containers

    static let floatingPoint: [CodableShape] = [
        evolve("Float 0.1 read as Double", Float(0.1), as: Double.self),
        evolve("Float 1/3 read as Double", Float(1) / 3, as: Double.self),
        evolve("Float subnormal read as Double", Float(1e-40), as: Double.self),
        evolve("Float greatest finite read as Double", Float.greatestFiniteMagnitude, as: Double.self),
        evolve("Float -0 read as Double", Float(-0.0), as: Double.self),
        evolve("Float 3 read as Double", Float(3), as: Double.self),
        evolve("Double 0.1 read as Float", 0.1, as: Float.self),
        evolve("Double pi read as Float", Double.pi, as: Float.self),
        evolve("Double 1e300 read as Float (too large)", 1e300, as: Float.self),
        evolve("Double 1e-50 read as Float (rounds to zero)", 1e-50, as: Float.self),
        evolve("Double 1e-45 read as Float (subnormal)", 1e-45, as: Float.self),
        evolve("Double just under Float's overflow read as Float", 3.4028235677973366e38, as: Float.self),
        evolve("Double 0.30000000000000004 read as Float", 0.1 + 0.2, as: Float.self),
        evolve("[Float] read as [Double]", [Float(0.1), 0.2, 2.5], as: [Double].self),
        evolve("[String: Float] read as [String: Double]", ["a": Float(0.7)], as: [String: Double].self),
        evolve("Float? read as Double?", Float?(1.1), as: Double?.self),
    ]

    static let integers: [CodableShape] = [
        evolve("Int 2^53 + 1 read as Double", 9_007_199_254_740_993, as: Double.self),
        evolve("Int 2^24 + 1 read as Float", 16_777_217, as: Float.self),
        evolve("Int64.max read as Float", Int64.max, as: Float.self),
        evolve("UInt64.max read as Double", UInt64.max, as: Double.self),
        evolve("Int 300 read as Int8 (too large)", 300, as: Int8.self),
        evolve("Int -1 read as UInt8", -1, as: UInt8.self),
        evolve("UInt64.max read as Int64", UInt64.max, as: Int64.self),
        evolve("Int8 -5 read as Int64", Int8(-5), as: Int64.self),
        evolve("UInt32 read as Int", UInt32.max, as: Int.self),
        evolve("Double 5.0 read as Int", 5.0, as: Int.self),
        evolve("Double 5.5 read as Int", 5.5, as: Int.self),
        evolve("Double -0.0 read as Int", -0.0, as: Int.self),
        evolve("Double 1e15 read as Int", 1e15, as: Int.self),
        evolve("Double 2^60 read as Int", 1_152_921_504_606_846_976.0, as: Int.self),
        evolve("Double 2^53 + 2 read as Int64", 9_007_199_254_740_994.0, as: Int64.self),
        evolve("Double 1e20 read as Int", 1e20, as: Int.self),
        evolve("Double 1e19 read as UInt64", 1e19, as: UInt64.self),
        evolve("Double -1 read as UInt", -1.0, as: UInt.self),
        evolve("Float 3 read as Int", Float(3), as: Int.self),
        evolve("Float 2^24 read as Int32", Float(16_777_216), as: Int32.self),
        evolve("Float 1e10 read as Int", Float(1e10), as: Int.self),
        evolve("Float 0.5 read as Int", Float(0.5), as: Int.self),
        evolve("Int read as Bool", 1, as: Bool.self),
        evolve("Bool read as Int", true, as: Int.self),
        evolve("Int read as String", 7, as: String.self),
        evolve("String read as Int", "7", as: Int.self),
    ]

    static let decimals: [CodableShape] = [
        evolve("Double 19.99 read as Decimal", 19.99, as: Decimal.self),
        evolve("Double 0.1 read as Decimal", 0.1, as: Decimal.self),
        evolve("Double 1e-7 read as Decimal", 1e-7, as: Decimal.self),
        evolve("Double 1e20 read as Decimal", 1e20, as: Decimal.self),
        evolve("Double 1e300 read as Decimal", 1e300, as: Decimal.self),
        evolve("Double -0.0 read as Decimal", -0.0, as: Decimal.self),
        evolve("Float 0.1 read as Decimal", Float(0.1), as: Decimal.self),
        evolve("Int64.max read as Decimal", Int64.max, as: Decimal.self),
        evolve("UInt64.max read as Decimal", UInt64.max, as: Decimal.self),
        evolve("Decimal 19.99 read as Double", Decimal(string: "19.99")!, as: Double.self),
        evolve("Decimal 1e-30 read as Double", Decimal(string: "1e-30")!, as: Double.self),
        evolve("Decimal 0.1 read as Float", Decimal(string: "0.1")!, as: Float.self),
        evolve("Decimal 5 read as Int", Decimal(5), as: Int.self),
        evolve("Decimal 5.5 read as Int", Decimal(string: "5.5")!, as: Int.self),
        evolve("Decimal 12.0 read as Int", Decimal(string: "12.0")!, as: Int.self),
        evolve("Decimal with 30 digits read as Int", Decimal(string: "123456789012345678901234567890")!, as: Int.self),
        evolve("Decimal with 30 digits read as Double", Decimal(string: "123456789012345678901234567890")!, as: Double.self),
        evolve("Decimal -3.25 read as Decimal", Decimal(string: "-3.25")!, as: Decimal.self),
        evolve("String read as Decimal", "1.5", as: Decimal.self),
        evolve("Decimal read as String", Decimal(string: "1.5")!, as: String.self),
        evolve("[Double] read as [Decimal]", [19.99, 0.3, 1e-5], as: [Decimal].self),
    ]

    static let dates: [CodableShape] = [
        evolve("Date read as Double", Date(timeIntervalSinceReferenceDate: 12.5), as: Double.self),
        evolve("Date read as Float", Date(timeIntervalSinceReferenceDate: 700_000_000.123), as: Float.self),
        evolve("Date with whole seconds read as Int", Date(timeIntervalSinceReferenceDate: 600), as: Int.self),
        evolve("Date with a fraction read as Int", Date(timeIntervalSinceReferenceDate: 600.5), as: Int.self),
        evolve("Date read as Decimal", Date(timeIntervalSinceReferenceDate: 0.1), as: Decimal.self),
        evolve("Date read as String", Date(timeIntervalSinceReferenceDate: 3), as: String.self),
        evolve("Double read as Date", 42.25, as: Date.self),
        evolve("Int read as Date", 42, as: Date.self),
        evolve("Float read as Date", Float(0.1), as: Date.self),
        evolve("Decimal read as Date", Decimal(string: "0.1")!, as: Date.self),
        evolve("String read as Date", "2026-01-01", as: Date.self),
        evolve("[Date] read as [Double]", [Date(timeIntervalSinceReferenceDate: 1), Date(timeIntervalSinceReferenceDate: -1.5)], as: [Double].self),
    ]

    static let identifiers: [CodableShape] = [
        evolve("UUID read as String", UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, as: String.self),
        evolve("[UUID] read as [String]", [UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!], as: [String].self),
        evolve("UUID? read as String?", UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"), as: String?.self),
        evolve("lowercase UUID String read as UUID", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", as: UUID.self),
        evolve("invalid UUID String read as UUID", "not-a-uuid", as: UUID.self),
        evolve("Int read as UUID", 5, as: UUID.self),
        evolve("URL read as String", URL(string: "https://example.com/a?b=c#d")!, as: String.self),
        evolve("relative URL read as String", URL(string: "b/c", relativeTo: URL(string: "https://example.com/a/")!)!, as: String.self),
        evolve("[URL] read as [String]", [URL(string: "https://example.com")!, URL(string: "file:///tmp/x")!], as: [String].self),
        evolve("URL? read as String?", URL(string: "https://example.com"), as: String?.self),
        evolve("[String: URL] read as [String: String]", ["home": URL(string: "https://example.com")!], as: [String: String].self),
        evolve("String read as URL", "https://example.com/path", as: URL.self),
        evolve("empty String read as URL", "", as: URL.self),
        evolve("relative URL read back", URL(string: "b/c", relativeTo: URL(string: "https://example.com/a/")!)!, as: URL.self),
        evolve("Data read as String", Data([1, 2, 3, 250]), as: String.self),
        evolve("base64 String read as Data", "AQID+g==", as: Data.self),
        evolve("invalid base64 String read as Data", "!!", as: Data.self),
        evolve("Data read as [UInt8]", Data([1, 2]), as: [UInt8].self),
        evolve("[UInt8] read as Data", [UInt8(1), 2], as: Data.self),
        evolve("String read as Bool", "true", as: Bool.self),
    ]

    /// A model before and after optional, reordered, added and removed properties.
    struct Before: Codable, Equatable, Sendable {
        var id: Int
        var title: String
        var rating: Double?
        var tags: [String]
    }

    struct After: Codable, Equatable, Sendable {
        var tags: [String]?
        var subtitle: String?
        var title: String
        var id: Int?
        var rating: Double
    }

    static let optionals: [CodableShape] = [
        evolve("Int read as Int?", 5, as: Int?.self),
        evolve("Int? nil read as Int", Int?.none, as: Int.self),
        evolve("Int? 5 read as Int", Int?(5), as: Int.self),
        evolve("String? nil read as String", String?.none, as: String.self),
        evolve("[Int]? nil read as [Int]", [Int]?.none, as: [Int].self),
        evolve("Date? nil read as Date", Date?.none, as: Date.self),
        evolve("URL? nil read as URL", URL?.none, as: URL.self),
        evolve("UUID? nil read as UUID", UUID?.none, as: UUID.self),
        evolve("Decimal? nil read as Decimal", Decimal?.none, as: Decimal.self),
        evolve("Data? nil read as Data", Data?.none, as: Data.self),
        evolve("Field? nil read as Field", Field<Int>?.none, as: Field<Int>.self),
        evolve("Int?? some(nil) read as Int??", Int??.some(nil), as: Int??.self),
        .roundTrip("evolution: properties reordered, made optional, added and removed",
                   Before(id: 1, title: "t", rating: 4.5, tags: ["a"]), as: After.self),
        .roundTrip("evolution: a nil optional made required", Before(id: 1, title: "t", rating: nil, tags: []), as: After.self),
    ]

    enum Kind: String, Codable, Equatable, Sendable { case small, large }

    static let containers: [CodableShape] = [
        evolve("enum read as String", Kind.large, as: String.self),
        evolve("String read as enum", "small", as: Kind.self),
        evolve("unknown String read as enum", "huge", as: Kind.self),
        evolve("struct read as [String: Int]", Field(3), as: [String: Int].self),
        evolve("[String: Int] read as struct", ["value": 3], as: Field<Int>.self),
        evolve("[Int] read as Set<Int>", [3, 1, 2, 3], as: Set<Int>.self),
        evolve("[Int] read as [String: Int]", [1, 2], as: [String: Int].self),
        evolve("[String: Int] read as [Int]", ["a": 1], as: [Int].self),
        evolve("[Int: String] read as [String: String]", [1: "one", 2: "two"], as: [String: String].self),
        evolve("[String: String] with number keys read as [Int: String]", ["1": "one"], as: [Int: String].self),
        evolve("[Field<Float>] read as [Field<Double>]", [Field(Float(0.1)), Field(Float(0.2))], as: [Field<Double>].self),
        evolve("Int read as [Int]", 5, as: [Int].self),
        evolve("[Int] read as Int", [5], as: Int.self),
    ]
}
