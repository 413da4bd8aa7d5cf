import Foundation

extension String {
    /// Whether both strings hold the same UTF-8 bytes (`==` also calls canonically equivalent
    /// spellings equal, which encode and hash differently). Strings that share storage are told
    /// equal without reading them: the write path compares each sample's source and metadata with
    /// the last few it saw, and an import hands on the same interned strings record after record.
    public func hasSameUTF8(as other: String) -> Bool {
        // Native strings are read where they lie; others (bridged, not contiguous) byte by byte.
        let contiguous = utf8.withContiguousStorageIfAvailable { a in
            other.utf8.withContiguousStorageIfAvailable { b -> Bool in
                guard a.count == b.count else { return false }
                guard let x = a.baseAddress, let y = b.baseAddress, x != y else { return true }
                return memcmp(x, y, a.count) == 0
            }
        }
        if let contiguous, let same = contiguous { return same }
        return utf8.elementsEqual(other.utf8)
    }
}

extension Optional where Wrapped == String {
    /// Whether both are nil, or both hold strings of the same UTF-8 bytes (`hasSameUTF8(as:)`).
    public func hasSameUTF8(as other: String?) -> Bool {
        switch (self, other) {
        case (nil, nil): true
        case let (a?, b?): a.hasSameUTF8(as: b)
        default: false
        }
    }
}
