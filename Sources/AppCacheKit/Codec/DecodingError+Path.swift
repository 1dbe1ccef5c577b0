import Foundation

extension DecodingError {
    /// This error as seen from the container holding `key`: the same error, with `key` in
    /// front of its coding path.
    ///
    /// The binary decoder's containers keep no coding path (building one per field would cost
    /// more than decoding the field); an error collects its path instead as it leaves each
    /// level, so the diagnostics report of a decoding failure names the property, as
    /// `JSONDecoder`'s does (`[Index 3, price]`).
    func under(_ key: any CodingKey) -> DecodingError {
        func context(_ context: Context) -> Context {
            Context(codingPath: [key] + context.codingPath, debugDescription: context.debugDescription, underlyingError: context.underlyingError)
        }
        switch self {
        case .typeMismatch(let type, let found): return .typeMismatch(type, context(found))
        case .valueNotFound(let type, let found): return .valueNotFound(type, context(found))
        case .keyNotFound(let missing, let found): return .keyNotFound(missing, context(found))
        case .dataCorrupted(let found): return .dataCorrupted(context(found))
        @unknown default: return self
        }
    }
}

/// The coding key of an array element, named as `JSONDecoder` names it (`Index 3`).
struct IndexKey: CodingKey {
    let intValue: Int?
    let stringValue: String

    init(_ index: Int) {
        intValue = index
        stringValue = "Index \(index)"
    }

    init?(intValue: Int) {
        self.init(intValue)
    }

    init?(stringValue: String) {
        return nil
    }
}
