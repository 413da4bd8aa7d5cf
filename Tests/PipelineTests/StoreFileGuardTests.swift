import Foundation
import Testing
import SQLiteStore

/// Issue 10 finding 7: what HealthStore does with the files and directories it is given.
@Suite struct StoreFileGuardTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-guard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
    }

    private func mode(_ path: String) throws -> Int {
        try #require((FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue)
    }

    private func subdirectory(_ name: String, mode: Int) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
        return url
    }

    @Test func aLooseStoreAndItsJournalFilesAreTightenedTo0600() throws {
        let path = directory.appendingPathComponent("health.sqlite").path
        try HealthStore(path: path).close()
        for suffix in ["", "-wal", "-shm"] {
            if !FileManager.default.fileExists(atPath: path + suffix) {
                #expect(FileManager.default.createFile(atPath: path + suffix, contents: nil))
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: path + suffix)
        }
        let store = try HealthStore(path: path)
        defer { store.close() }
        for suffix in ["", "-wal", "-shm"] {
            #expect(try mode(path + suffix) == 0o600, "\(suffix)")
        }
    }

    @Test(.enabled(if: getuid() == 0, "needs root to give a file to another user"))
    func aLooseStoreOfAnotherUserIsRefused() throws {
        let path = directory.appendingPathComponent("health.sqlite").path
        try HealthStore(path: path).close()
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect(chown(path, 65534, 65534) == 0)
        #expect(throws: StoreFileError.looseModeNotOwned(path: path, mode: UInt32(0o100644), owner: 65534)) {
            try HealthStore(path: path)
        }
        #expect(try mode(path) == 0o644)
    }

    @Test(arguments: [0o777, 0o1777])
    func aStoreInADirectoryEveryoneMayWriteIsRefused(directoryMode: Int) throws {
        let shared = try subdirectory("shared", mode: directoryMode)
        let path = shared.appendingPathComponent("health.sqlite").path
        #expect(throws: StoreFileError.directoryWritableByOthers(directory: shared.path, mode: UInt32(0o40000 | directoryMode))) {
            try HealthStore(path: path)
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aSymlinkInADirectoryOthersMayWriteIsRefusedAndItsTargetLeftAlone() throws {
        let target = directory.appendingPathComponent("target.txt").path
        try Data("precious".utf8).write(to: URL(fileURLWithPath: target))
        let shared = try subdirectory("group", mode: 0o775)
        let link = shared.appendingPathComponent("health.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(throws: StoreFileError.symlinkInSharedDirectory(path: link, directory: shared.path)) {
            try HealthStore(path: link)
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "precious")
    }

    @Test func aSymlinkInAPrivateDirectoryOpensItsTarget() throws {
        let real = directory.appendingPathComponent("real.sqlite").path
        try HealthStore(path: real).close()
        let mine = try subdirectory("mine", mode: 0o700)
        let link = mine.appendingPathComponent("health.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        let store = try HealthStore(path: link)
        store.close()
        #expect(!FileManager.default.fileExists(atPath: link + "-wal"))
    }

    @Test func missingDirectoriesAreCreated0700() throws {
        let path = directory.appendingPathComponent("a/b/health.sqlite").path
        try HealthStore(path: path).close()
        #expect(try mode(directory.appendingPathComponent("a").path) == 0o700)
        #expect(try mode(directory.appendingPathComponent("a/b").path) == 0o700)
        #expect(try mode(path) == 0o600)
    }
}
