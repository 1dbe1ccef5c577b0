/// Says where and why a collection failed to decode, as a developer reads it:
/// "`items[3].price`: expected Double, found String".
enum DecodingProblem {
    /// The path of `error` inside the collection, and what went wrong there; any other error's
    /// description.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .typeMismatch(_, let context):
            return "`\(path(context.codingPath))`: \(sentence(context.debugDescription))"
        case .valueNotFound(let type, let context):
            return "`\(path(context.codingPath))`: no value where a \(type) is required"
        case .keyNotFound(let key, let context):
            return "`\(path(context.codingPath + [key]))`: missing (a property added without a default in decoding?)"
        case .dataCorrupted(let context):
            return "`\(path(context.codingPath))`: \(sentence(context.debugDescription))"
        @unknown default:
            return "\(error)"
        }
    }

    /// A decoder's description without its closing period, to go inside a sentence.
    private static func sentence(_ text: String) -> String {
        text.hasSuffix(".") ? String(text.dropLast()) : text
    }

    /// `items[3].price` for the coding path `[3, "price"]` of a collection's items.
    static func path(_ keys: [any CodingKey]) -> String {
        var text = "items"
        for key in keys {
            if let index = key.intValue, key.stringValue.hasPrefix("Index") || key.stringValue == "\(index)" {
                text += "[\(index)]"
            } else {
                text += "." + key.stringValue
            }
        }
        return text
    }
}
