import Foundation

/// Why one stored value cannot be read as the type asked for, before anyone knows where it
/// is: the container that read the value turns it into the `DecodingError` `JSONDecoder`
/// throws there, with the container's path and the key or index of the value.
///
/// Errors thrown deeper (by a nested value's own `init(from:)`) already carry their whole
/// path and pass through containers untouched.
enum BinaryValueFailure: Error, @unchecked Sendable {
    /// The stored value is of another kind (`found` is its tag).
    case typeMismatch(Any.Type, found: UInt8)
    /// The stored value is `nil` where `type` is required.
    case valueNotFound(Any.Type)
    /// The stored value is of the right kind and cannot be one (an invalid URL, base64 that
    /// does not decode).
    case dataCorrupted(String)

    /// The error `JSONDecoder` throws for this failure at `path`.
    func error(at path: [any CodingKey]) -> DecodingError {
        switch self {
        case .typeMismatch(let type, let found):
            .typeMismatch(type, DecodingError.Context(codingPath: path, debugDescription: "expected \(type), found \(BinaryFormat.typeName(ofTag: found))"))
        case .valueNotFound(let type):
            .valueNotFound(type, DecodingError.Context(codingPath: path, debugDescription: "Cannot get value of type \(type) -- found nil instead."))
        case .dataCorrupted(let description):
            .dataCorrupted(DecodingError.Context(codingPath: path, debugDescription: description))
        }
    }
}

/// A stored number that does not fit the type asked for (300 read as `Int8`, 1e300 read as
/// `Float`, 0.5 read as `Int`).
///
/// `JSONDecoder` reports these as damage of the whole payload (`dataCorrupted` with an empty
/// path), not as a `DecodingError` at the value, so a model's `catch let error as
/// DecodingError` around one field does not see it. The binary decoder does the same: this
/// error passes through containers and becomes that `dataCorrupted` where decoding began.
struct BinaryNumberNotRepresentable: Error, @unchecked Sendable {
    /// The number, as JSON would have written it.
    let number: String
    let type: Any.Type

    var decodingError: DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "The stored number \(number) does not fit in \(type)."))
    }
}
