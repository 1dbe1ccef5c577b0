import AppCacheKit
import Foundation

/// A model with nested types, optionals, dates, URLs and non-ASCII text.
struct Note: CacheableModel, Equatable {
    struct Author: Codable, Equatable, Sendable {
        var name: String
        var homepage: URL?
    }

    enum Mood: String, Codable, Sendable {
        case calm, busy
    }

    var id: Int
    var text: String
    var written: Date
    var author: Author
    var tags: [String]
    var score: Double?
    var mood: Mood?
    var attachments: [String: [Int]]

    static var cacheName: String { "Notes" }

    static func make(_ id: Int, writer: String = "w") -> Note {
        Note(
            id: id, text: "Grüße aus Zürich — 東京 🍜 #\(id) by \(writer)",
            written: Date(timeIntervalSinceReferenceDate: 700_000_000.123 + Double(id)),
            author: Author(name: writer, homepage: id.isMultiple(of: 2) ? URL(string: "https://example.com/ü/\(id)?q=a b".addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!) : nil),
            tags: id.isMultiple(of: 3) ? [] : ["a", "ß", "🍣"],
            score: id.isMultiple(of: 2) ? Double(id) / 3 : nil,
            mood: id.isMultiple(of: 5) ? nil : .busy,
            attachments: ["x": [id, -id], "leer": []])
    }
}

/// The same stored name as `Note`, one schema version later, with a field `Note` lacks.
struct NoteV2: CacheableModel, Equatable {
    var id: Int
    var title: String
    static var cacheName: String { "Notes" }
    static var schemaVersion: Int { 2 }
}

/// A type that keeps every default of `CacheableModel`.
struct Plain: CacheableModel, Equatable {
    var value: Int
}

/// A type with a staleness threshold of its own.
struct Headline: CacheableModel, Equatable {
    var title: String
    static var stalenessThreshold: Duration? { .seconds(30) }
}

/// Floating-point values that JSON cannot hold.
struct Measurement: CacheableModel, Equatable {
    var value: Double
}
