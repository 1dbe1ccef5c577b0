/// The HTTP validators a server sent with a collection: what a conditional request sends back
/// (`If-None-Match`, `If-Modified-Since`) so the server can answer `304 Not Modified`.
///
/// ``AppCache/load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)`` stores the validators a fetch returns with its
/// items in the collection's archive header, so they survive relaunches, and passes them to the
/// next fetch of that collection.
///
/// ```swift
/// func conditionalHeaders(for validators: CacheValidators?) -> [String: String] {
///     var headers: [String: String] = [:]
///     if let etag = validators?.etag { headers["If-None-Match"] = etag }
///     if let lastModified = validators?.lastModified { headers["If-Modified-Since"] = lastModified }
///     return headers
/// }
/// ```
public struct CacheValidators: Sendable, Hashable, Codable {
    /// The response's `ETag` header, quotes and all; `nil` when it had none.
    public var etag: String?
    /// The response's `Last-Modified` header, as sent; `nil` when it had none.
    public var lastModified: String?

    /// Makes a set of validators.
    ///
    /// - Parameters:
    ///   - etag: the response's `ETag` header.
    ///   - lastModified: the response's `Last-Modified` header.
    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    private enum CodingKeys: String, CodingKey {
        case etag, lastModified
    }

    /// Decodes validators an app stored itself, with keys `etag` and `lastModified` (either may
    /// be missing).
    ///
    /// - Throws: `DecodingError` when a present value is not a string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        etag = try container.decodeIfPresent(String.self, forKey: .etag)
        lastModified = try container.decodeIfPresent(String.self, forKey: .lastModified)
    }

    /// Encodes the validators with keys `etag` and `lastModified`, leaving out missing ones.
    ///
    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(etag, forKey: .etag)
        try container.encodeIfPresent(lastModified, forKey: .lastModified)
    }
}
