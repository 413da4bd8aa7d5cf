import Foundation
import Testing

@testable import SQLiteStore

@Suite("Statement")
struct StatementTests {
    let connection: Connection

    init() throws {
        connection = try Connection.inMemory()
        try connection.execute(sql: "CREATE TABLE v(id INTEGER PRIMARY KEY, x)")
    }

    /// Inserts one value through `bind` and returns the stored row's (typeof, value).
    private func roundTrip(_ bind: (Statement) throws -> Void) throws -> (type: String, value: DatabaseValue) {
        try connection.execute(sql: "DELETE FROM v")
        let insert = try connection.prepare("INSERT INTO v(id, x) VALUES (1, ?)")
        try bind(insert)
        try insert.execute()
        let row = try connection.prepare("SELECT typeof(x), x FROM v WHERE id = 1").firstRow {
            ($0.string(at: 0) ?? "?", $0.value(at: 1))
        }
        let found = try #require(row)
        return (found.0, found.1)
    }

    // MARK: Binding

    @Test("each typed bind stores the right storage class and value")
    func typedBinds() throws {
        #expect(try roundTrip { try $0.bind(Int64.max, at: 1) } == ("integer", .integer(.max)))
        #expect(try roundTrip { try $0.bind(Int64.min, at: 1) } == ("integer", .integer(.min)))
        #expect(try roundTrip { try $0.bind(-42, at: 1) } == ("integer", .integer(-42)))
        #expect(try roundTrip { try $0.bind(true, at: 1) } == ("integer", .integer(1)))
        #expect(try roundTrip { try $0.bind(false, at: 1) } == ("integer", .integer(0)))
        #expect(try roundTrip { try $0.bind(72.35, at: 1) } == ("real", .real(72.35)))
        #expect(try roundTrip { try $0.bind("kg", at: 1) } == ("text", .text("kg")))
        #expect(try roundTrip { try $0.bind(Data([0, 1, 0xFF]), at: 1) } == ("blob", .blob(Data([0, 1, 0xFF]))))
        #expect(try roundTrip { try $0.bind([UInt8]([9, 8]), at: 1) } == ("blob", .blob(Data([9, 8]))))
        #expect(try roundTrip { try $0.bind(nil, at: 1) } == ("null", .null))
        #expect(try roundTrip { try $0.bindNull(at: 1) } == ("null", .null))
        #expect(try roundTrip { try $0.bind(Int32(-7), at: 1) } == ("integer", .integer(-7)))
        #expect(try roundTrip { try $0.bind(DatabaseValue.real(0.5), at: 1) } == ("real", .real(0.5)))
    }

    @Test("empty text and empty blobs are not NULL")
    func emptyValues() throws {
        #expect(try roundTrip { try $0.bind("", at: 1) } == ("text", .text("")))
        #expect(try roundTrip { try $0.bind(Data(), at: 1) } == ("blob", .blob(Data())))
        #expect(try roundTrip { try $0.bind([UInt8](), at: 1) } == ("blob", .blob(Data())))
    }

    @Test("raw bytes bind as a blob copied at bind time; an empty buffer is an empty blob")
    func rawByteBinds() throws {
        let uuid = try #require(UUID(uuidString: "0F1E2D3C-4B5A-4978-8796-A5B4C3D2E1F0"))
        let expected = Data([0x0F, 0x1E, 0x2D, 0x3C, 0x4B, 0x5A, 0x49, 0x78, 0x87, 0x96, 0xA5, 0xB4, 0xC3, 0xD2, 0xE1, 0xF0])
        #expect(try roundTrip { statement in
            try withUnsafeBytes(of: uuid.uuid) { try statement.bind(bytes: $0, at: 1) }
        } == ("blob", .blob(expected)))
        // SQLite copied the bytes: changing the buffer after binding does not change the row.
        #expect(try roundTrip { statement in
            var bytes: [UInt8] = [1, 2, 3]
            try bytes.withUnsafeBytes { try statement.bind(bytes: $0, at: 1) }
            bytes[0] = 99
        } == ("blob", .blob(Data([1, 2, 3]))))
        #expect(try roundTrip { try $0.bind(bytes: UnsafeRawBufferPointer(start: nil, count: 0), at: 1) }
            == ("blob", .blob(Data())))
    }

    @Test("text round-trips byte for byte: non-ASCII, long, embedded NUL, bridged substrings")
    func textRoundTrip() throws {
        let samples = [
            "Körpertemperatur 37,2 °C",
            "心拍数 💓",
            "a\u{0}b",
            String(repeating: "x", count: 100_000),
            String("--prefix-kept-out--".dropFirst(2).dropLast(2)),
        ]
        for sample in samples {
            let result = try roundTrip { try $0.bind(sample, at: 1) }
            #expect(result.type == "text")
            #expect(result.value == .text(sample))
        }
        let length = try connection.scalarInt64("SELECT length(CAST(x AS BLOB)) FROM v")
        #expect(length == Int64("prefix-kept-out".utf8.count))
    }

    @Test("bindStaticText stores bytes the caller keeps alive across the step")
    func staticText() throws {
        let insert = try connection.prepare("INSERT INTO v(id, x) VALUES (?, ?)")
        let labels = ["mg/dL", "", "mmol<180.1558800000541>/L"]
        for (offset, label) in labels.enumerated() {
            let bytes = Array(label.utf8)
            try bytes.withUnsafeBufferPointer { buffer in
                try insert.bind(offset, at: 1)
                try insert.bindStaticText(buffer, at: 2)
                try insert.execute()  // resets while `bytes` is still alive
                insert.clearBindings()
            }
        }
        let stored = try connection.prepare("SELECT typeof(x), x FROM v ORDER BY id").mapRows {
            ($0.string(at: 0), $0.string(at: 1))
        }
        #expect(stored.map(\.0) == ["text", "text", "text"])
        #expect(stored.map(\.1) == labels)
    }

    @Test("optionals bind their value or NULL")
    func optionals() throws {
        let present: String? = "x"
        let absent: Double? = nil
        #expect(try roundTrip { try $0.bind(present, at: 1) } == ("text", .text("x")))
        #expect(try roundTrip { try $0.bind(absent, at: 1) } == ("null", .null))
    }

    @Test("named parameters bind with or without their prefix; unknown names throw SQLITE_RANGE")
    func namedBinding() throws {
        let insert = try connection.prepare("INSERT INTO v(id, x) VALUES (:id, @value)")
        #expect(insert.parameterCount == 2)
        #expect(insert.parameterIndex(named: ":id") == 1)
        #expect(insert.parameterIndex(named: "value") == 2)
        #expect(insert.parameterName(at: 2) == "@value")
        #expect(insert.parameterIndex(named: "nope") == nil)
        try insert.bind(5, named: "id")
        try insert.bind("five", named: "@value")
        try insert.execute()
        try insert.bind(named: [":id": 6, "value": "six"])
        try insert.execute()
        #expect(try connection.scalar("SELECT group_concat(x, ',') FROM v ORDER BY id") == .text("five,six"))

        let error = #expect(throws: SQLiteError.self) { try insert.bind(1, named: "missing") }
        #expect(error?.code == 25)  // SQLITE_RANGE
        #expect(error?.codeName == "SQLITE_RANGE")
    }

    @Test("bind(...) binds all parameters in order and checks the count")
    func bindAll() throws {
        let insert = try connection.prepare("INSERT INTO v(id, x) VALUES (?, ?)")
        try insert.bind(Int64(1), "one")
        try insert.execute()
        try insert.execute(binding: 2, nil as Data?)
        try insert.bind(all: [3, 3.5])
        try insert.execute()
        let rows = try connection.prepare("SELECT id, x FROM v ORDER BY id").mapRows { ($0.int64(at: 0), $0.value(at: 1)) }
        #expect(rows.map(\.0) == [1, 2, 3])
        #expect(rows.map(\.1) == [.text("one"), .null, .real(3.5)])

        let tooFew = #expect(throws: SQLiteError.self) { try insert.bind(9) }
        #expect(tooFew?.code == 25)
        #expect(tooFew?.message == "1 values for 2 parameters")
        #expect(throws: SQLiteError.self) { try insert.bind(all: [1, 2, 3]) }
    }

    @Test("an out-of-range index throws SQLITE_RANGE")
    func bindOutOfRange() throws {
        let insert = try connection.prepare("INSERT INTO v(id, x) VALUES (?, ?)")
        for index in [0, 3, -1, Int(Int32.max) + 2] {
            let error = #expect(throws: SQLiteError.self) { try insert.bind(1, at: index) }
            #expect(error?.code == 25)
        }
    }

    @Test("binding while the statement is mid-result throws SQLITE_MISUSE")
    func bindWhileRunning() throws {
        try connection.execute(sql: "INSERT INTO v(x) VALUES (1), (2)")
        let query = try connection.prepare("SELECT x FROM v WHERE x > ?")
        try query.bind(0, at: 1)
        #expect(try query.step())
        let error = #expect(throws: SQLiteError.self) { try query.bind(1, at: 1) }
        #expect(error?.code == 21)
        query.reset()
        try query.bind(1, at: 1)
        #expect(try query.mapRows { $0.int64(at: 0) } == [2])
    }

    // MARK: Stepping and reuse

    @Test("step is true per row and false at the end; execute and the row helpers reset")
    func stepping() throws {
        try connection.execute(sql: "INSERT INTO v(x) VALUES (10), (20), (30)")
        let query = try connection.prepare("SELECT x FROM v ORDER BY x")
        #expect(try query.step())
        #expect(query.int64(at: 0) == 10)
        #expect(try query.step())
        #expect(try query.step())
        #expect(try !query.step())
        query.reset()

        var seen: [Int64] = []
        try query.forEachRow { seen.append($0.int64(at: 0)) }
        try query.forEachRow { seen.append($0.int64(at: 0)) }
        #expect(seen == [10, 20, 30, 10, 20, 30])
        #expect(try query.firstRow { $0.int64(at: 0) } == 10)
        #expect(try query.firstRow { $0.int64(at: 0) } == 10)
        #expect(try query.mapRows { $0.int(at: 0) } == [10, 20, 30])

        let empty = try connection.prepare("SELECT x FROM v WHERE 0")
        #expect(try empty.firstRow { $0.int64(at: 0) } == nil)
        #expect(try empty.mapRows { $0.int64(at: 0) }.isEmpty)
    }

    @Test("a row body that throws stops the iteration and leaves the statement reusable")
    func forEachRowThrows() throws {
        struct Stop: Error {}
        try connection.execute(sql: "INSERT INTO v(x) VALUES (1), (2), (3)")
        let query = try connection.prepare("SELECT x FROM v ORDER BY x")
        var seen = 0
        #expect(throws: Stop.self) {
            try query.forEachRow { _ in
                seen += 1
                if seen == 2 { throw Stop() }
            }
        }
        #expect(seen == 2)
        #expect(try query.mapRows { $0.int64(at: 0) } == [1, 2, 3])
    }

    @Test("one prepared insert reused for many rows; a constraint error does not spoil it")
    func reuse() throws {
        try connection.execute(sql: "CREATE TABLE s(uuid TEXT PRIMARY KEY, value REAL NOT NULL)")
        let insert = try connection.prepare("INSERT INTO s(uuid, value) VALUES (?, ?)")
        try connection.transaction {
            for index in 0..<1_000 {
                try insert.bind("uuid-\(index)", at: 1)
                try insert.bind(Double(index) / 4, at: 2)
                try insert.execute()
            }
        }
        try insert.bind("uuid-7", at: 1)
        let duplicate = #expect(throws: SQLiteError.self) { try insert.execute() }
        #expect(duplicate?.isUniqueViolation == true)
        try insert.bind("uuid-new", at: 1)
        try insert.execute()
        #expect(try connection.scalarInt64("SELECT count(*) FROM s") == 1_001)
        #expect(try connection.scalar("SELECT sum(value) FROM s") == .real(124_875 + 249.75))  // value 249.75 stayed bound
    }

    @Test("isReadOnly tells queries from writes")
    func readOnlyFlag() throws {
        #expect(try connection.prepare("SELECT 1").isReadOnly)
        #expect(try !connection.prepare("DELETE FROM v").isReadOnly)
    }

    // MARK: Columns

    @Test("column count, names, types and typed reads")
    func columns() throws {
        let query = try connection.prepare(
            "SELECT 42 AS i, 2.5 AS r, 'héllo' AS t, x'00FF' AS b, NULL AS n, '17' AS numeric_text")
        #expect(query.columnCount == 6)
        #expect((0..<6).map { query.columnName(at: $0) } == ["i", "r", "t", "b", "n", "numeric_text"])
        #expect(query.columnName(at: 6) == nil)
        #expect(query.columnIndex(named: "t") == 2)
        #expect(query.columnIndex(named: "zz") == nil)
        #expect(try query.step())
        #expect((0..<5).map { query.columnType(at: $0) } == [.integer, .real, .text, .blob, .null])
        #expect(query.int64(at: 0) == 42)
        #expect(query.int(at: 0) == 42)
        #expect(query.bool(at: 0))
        #expect(query.double(at: 1) == 2.5)
        #expect(query.string(at: 2) == "héllo")
        #expect(query.data(at: 3) == Data([0x00, 0xFF]))
        #expect(query.bytes(at: 3) == [0x00, 0xFF])
        #expect(query.isNull(at: 4))
        #expect(!query.isNull(at: 0))
        #expect(query.string(at: 4) == nil)
        #expect(query.data(at: 4) == nil)
        #expect(query.int64(at: 4) == 0)
        #expect(query.int64(at: 5) == 17)  // SQLite's conversion
        #expect(query.value(at: 0) == .integer(42))
        #expect(query.value(at: 4) == .null)
        #expect(query.withUnsafeBytes(at: 2) { $0.map { Array($0) } } == Array("héllo".utf8))
        #expect(query.withUnsafeBytes(at: 4) { $0 == nil })
    }

    @Test("generic column reads decode NULL as nil and check ranges")
    func genericColumns() throws {
        let query = try connection.prepare("SELECT 5, NULL, 'x', 4294967296, x'01', 1")
        #expect(try query.step())
        #expect(query.column(0, as: Int64.self) == 5)
        #expect(query.column(0, as: Int.self) == 5)
        #expect(query.column(1, as: Int64.self) == nil)
        #expect(query.column(1, as: String?.self) == .some(nil))
        #expect(query.column(2, as: String?.self) == .some("x"))
        #expect(query.column(2, as: String.self) == "x")
        #expect(query.column(3, as: Int32.self) == nil)  // does not fit
        #expect(query.column(3, as: Int64.self) == 4_294_967_296)
        #expect(query.column(4, as: Data.self) == Data([1]))
        #expect(query.column(4, as: [UInt8].self) == [1])
        #expect(query.column(5, as: Bool.self) == true)
        #expect(query.column(0, as: Double.self) == 5.0)
        #expect(query.column(1, as: DatabaseValue.self) == .null)
    }

    @Test("an empty blob reads as empty Data, not nil")
    func emptyBlobRead() throws {
        let query = try connection.prepare("SELECT x'', ''")
        #expect(try query.step())
        #expect(query.data(at: 0) == Data())
        #expect(query.bytes(at: 0) == [])
        #expect(query.string(at: 1) == "")
        #expect(query.value(at: 0) == .blob(Data()))
    }
}
