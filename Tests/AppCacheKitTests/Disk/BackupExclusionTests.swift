import Foundation
import Testing

@testable import AppCacheKit

/// Which roots must be kept out of device backups (set on Apple platforms when a cache opens).
@Suite struct BackupExclusionTests {
    @Test(arguments: [
        "/var/mobile/Containers/Data/Application/A1/Library/Caches/AppCache",
        "/private/var/mobile/Containers/Shared/AppGroup/G1/Library/Caches/AppCache",
        "/Users/me/Library/Caches/com.example.app/AppCache",
        "/private/var/mobile/Containers/Data/Application/A1/tmp/cache",
    ])
    func rootsInACachesDirectoryAreLeftAlone(path: String) {
        #expect(!BackupExclusion.isNeeded(forRootPath: path))
    }

    @Test(arguments: [
        "/private/var/mobile/Containers/Shared/AppGroup/G1/AppCache",
        "/var/mobile/Containers/Data/Application/A1/Documents/AppCache",
        "/var/mobile/Containers/Data/Application/A1/Library/Application Support/AppCache",
        "/private/var/mobile/Containers/Shared/AppGroup/G1/Library/CachesNot/AppCache",
    ])
    func otherRootsAreExcluded(path: String) {
        #expect(BackupExclusion.isNeeded(forRootPath: path))
    }
}
