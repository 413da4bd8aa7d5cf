import Foundation

/// A fresh directory under the system temporary directory, removed when released.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("SQLiteStoreTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The path of `name` inside the directory.
    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }
}

/// The permission bits (`st_mode & 0o777`) of the file at `path`, or nil if it does not exist.
func permissionBits(_ path: String) -> Int? {
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
        let permissions = attributes[.posixPermissions] as? NSNumber
    else { return nil }
    return permissions.intValue & 0o777
}
