import Foundation

/// How a collection becomes the payload bytes of an archive, and back.
///
/// The raw value is stored in each archive header, so a faster codec can be added later while
/// archives written by this one stay readable.
enum PayloadCodec: UInt16, Sendable {
    /// `JSONEncoder` and `JSONDecoder` with their default strategies.
    case json = 1

    /// The payload for `items`.
    func encode<Model: Encodable>(_ items: [Model]) throws -> Data {
        switch self {
        case .json: try JSONEncoder().encode(items)
        }
    }

    /// The items held in `payload`.
    func decode<Model: Decodable>(_ type: Model.Type, from payload: Data) throws -> [Model] {
        switch self {
        case .json: try JSONDecoder().decode([Model].self, from: payload)
        }
    }
}
