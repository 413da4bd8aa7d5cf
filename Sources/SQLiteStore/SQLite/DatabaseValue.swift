import CSQLite
import Foundation

/// A value that can be bound to a statement parameter and read back from a result column.
///
/// Conform your own types by forwarding to one of the built-in binds, for example a UUID stored
/// as text: `try statement.bind(uuid.uuidString, at: index)`.
public protocol DatabaseValueConvertible {
    /// Binds `self` to the 1-based parameter `index` of `statement`.
    func bind(to statement: Statement, at index: Int) throws
    /// Reads column `index` (0-based) of the current row; `nil` when the column is NULL (other
    /// storage classes are converted by SQLite's rules) or the value does not fit the type.
    static func read(from statement: Statement, at index: Int) -> Self?
}

/// The SQLite storage classes of a column value.
public enum ColumnType: Sendable, Hashable {
    case integer, real, text, blob, null
}

/// A dynamically typed SQLite value, for generic code, tests and debugging.
public enum DatabaseValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

extension DatabaseValue: DatabaseValueConvertible {
    public func bind(to statement: Statement, at index: Int) throws {
        switch self {
        case .null: try statement.bindNull(at: index)
        case .integer(let value): try statement.bind(value, at: index)
        case .real(let value): try statement.bind(value, at: index)
        case .text(let value): try statement.bind(value, at: index)
        case .blob(let value): try statement.bind(value, at: index)
        }
    }

    public static func read(from statement: Statement, at index: Int) -> DatabaseValue? {
        statement.value(at: index)
    }
}

extension DatabaseValue: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}

extension Int64: DatabaseValueConvertible {
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(self, at: index) }
    public static func read(from statement: Statement, at index: Int) -> Int64? {
        statement.isNull(at: index) ? nil : statement.int64(at: index)
    }
}

extension Int: DatabaseValueConvertible {
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(self, at: index) }
    public static func read(from statement: Statement, at index: Int) -> Int? {
        statement.isNull(at: index) ? nil : Int(truncatingIfNeeded: statement.int64(at: index))
    }
}

extension Int32: DatabaseValueConvertible {
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(Int64(self), at: index) }
    /// `nil` also when the stored integer does not fit in 32 bits.
    public static func read(from statement: Statement, at index: Int) -> Int32? {
        statement.isNull(at: index) ? nil : Int32(exactly: statement.int64(at: index))
    }
}

extension Double: DatabaseValueConvertible {
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(self, at: index) }
    public static func read(from statement: Statement, at index: Int) -> Double? {
        statement.isNull(at: index) ? nil : statement.double(at: index)
    }
}

extension Bool: DatabaseValueConvertible {
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(self, at: index) }
    public static func read(from statement: Statement, at index: Int) -> Bool? {
        statement.isNull(at: index) ? nil : statement.int64(at: index) != 0
    }
}

extension String: DatabaseValueConvertible {
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(self, at: index) }
    public static func read(from statement: Statement, at index: Int) -> String? { statement.string(at: index) }
}

extension Data: DatabaseValueConvertible {
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(self, at: index) }
    public static func read(from statement: Statement, at index: Int) -> Data? { statement.data(at: index) }
}

extension Array: DatabaseValueConvertible where Element == UInt8 {
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(self, at: index) }
    public static func read(from statement: Statement, at index: Int) -> [UInt8]? { statement.bytes(at: index) }
}

/// `nil` binds NULL; reading gives `.some(nil)` for NULL, so `Optional<T>` columns never fail.
extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    public func bind(to statement: Statement, at index: Int) throws {
        switch self {
        case .none: try statement.bindNull(at: index)
        case .some(let value): try value.bind(to: statement, at: index)
        }
    }

    public static func read(from statement: Statement, at index: Int) -> Wrapped?? {
        if statement.isNull(at: index) { return .some(nil) }
        guard let value = Wrapped.read(from: statement, at: index) else { return nil }
        return .some(value)
    }
}
