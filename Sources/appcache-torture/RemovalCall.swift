import AppCacheKit

/// The four calls that remove a user's data, each of which must be visible to every process
/// before it returns.
enum RemovalCall: String, CaseIterable {
    case removeUser
    case removeAllUsers
    case removeAll
    case signOut

    /// Removes `user`'s data through this call, on `cache` signed in as `user`.
    ///
    /// - Throws: what the call throws.
    func perform(on cache: AppCache, user: String) throws {
        switch self {
        case .removeUser: try cache.removeUser(user)
        case .removeAllUsers: try cache.removeAllUsers()
        case .removeAll: try cache.removeAll()
        case .signOut: try cache.signOut(removingData: true)
        }
    }

    /// How it reads in the report.
    var label: String {
        switch self {
        case .removeUser: "removeUser"
        case .removeAllUsers: "removeAllUsers"
        case .removeAll: "removeAll()"
        case .signOut: "signOut(removingData: true)"
        }
    }
}
