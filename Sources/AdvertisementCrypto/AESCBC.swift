import CCrypto

/// AES-128 in CBC mode with PKCS#7 padding, and MD5, through OpenSSL's libcrypto (EVP): what
/// the Eufy P2 scales' handshake uses (a key that is the MD5 of the scale's address, messages
/// encrypted under it). One instance holds one cipher context, used by one thread at a time.
public final class AESCBC {
    private let context: OpaquePointer

    /// - Throws: ``AESCBCError/contextUnavailable`` when libcrypto cannot allocate a context.
    public init() throws(AESCBCError) {
        guard let context = EVP_CIPHER_CTX_new() else { throw .contextUnavailable }
        self.context = context
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    /// `plaintext` encrypted under `key` (16 bytes) and `iv` (16 bytes), padded to whole blocks.
    public func encrypt(key: [UInt8], iv: [UInt8], plaintext: [UInt8]) throws(AESCBCError) -> [UInt8] {
        try run(encrypting: true, key: key, iv: iv, input: plaintext)
    }

    /// The plaintext of `ciphertext`, or nil when it does not decrypt to well-padded blocks
    /// under `key` and `iv` (a wrong key, a changed byte, not a whole number of blocks).
    public func decrypt(key: [UInt8], iv: [UInt8], ciphertext: [UInt8]) throws(AESCBCError) -> [UInt8]? {
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else { return nil }
        do {
            return try run(encrypting: false, key: key, iv: iv, input: ciphertext)
        } catch .badPadding {
            return nil
        }
    }

    /// The MD5 digest of `bytes` (16 bytes). Not for secrecy: devices that derive a key from it.
    public static func md5(_ bytes: [UInt8]) throws(AESCBCError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 16)
        var length: UInt32 = 0
        let done = bytes.withUnsafeBufferPointer { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_md5(), nil) == 1
        }
        guard done, length == 16 else { throw .libraryFailure("computing MD5") }
        return digest
    }

    private func run(encrypting: Bool, key: [UInt8], iv: [UInt8], input: [UInt8]) throws(AESCBCError) -> [UInt8] {
        guard key.count == 16 else { throw .keyLength(key.count) }
        guard iv.count == 16 else { throw .ivLength(iv.count) }
        EVP_CIPHER_CTX_reset(context)
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        var finished: Int32 = 0
        let ready = encrypting
            ? EVP_EncryptInit_ex(context, EVP_aes_128_cbc(), nil, key, iv) == 1
            : EVP_DecryptInit_ex(context, EVP_aes_128_cbc(), nil, key, iv) == 1
        guard ready else { throw .libraryFailure("setting up AES-128-CBC") }
        let updated = input.withUnsafeBufferPointer { bytes in
            encrypting
                ? EVP_EncryptUpdate(context, &output, &written, bytes.baseAddress, Int32(bytes.count)) == 1
                : EVP_DecryptUpdate(context, &output, &written, bytes.baseAddress, Int32(bytes.count)) == 1
        }
        guard updated else { throw .libraryFailure(encrypting ? "encrypting" : "decrypting") }
        let final = output.withUnsafeMutableBufferPointer { buffer in
            let tail = buffer.baseAddress.map { $0 + Int(written) }
            return encrypting
                ? EVP_EncryptFinal_ex(context, tail, &finished) == 1
                : EVP_DecryptFinal_ex(context, tail, &finished) == 1
        }
        guard final else {
            if encrypting { throw .libraryFailure("padding") }
            throw .badPadding
        }
        return Array(output.prefix(Int(written + finished)))
    }
}

/// Why AES-CBC or MD5 could not run (never a key's bytes: only lengths and what failed).
public enum AESCBCError: Error, Equatable, Sendable, CustomStringConvertible {
    case contextUnavailable
    case keyLength(Int)
    case ivLength(Int)
    /// Decryption ended in a block whose padding is not PKCS#7.
    case badPadding
    case libraryFailure(String)

    public var description: String {
        switch self {
        case .contextUnavailable: "libcrypto could not allocate a cipher context"
        case .keyLength(let count): "an AES-128 key has 16 bytes, not \(count)"
        case .ivLength(let count): "a CBC initialization vector has 16 bytes, not \(count)"
        case .badPadding: "the decrypted message does not end in PKCS#7 padding (a wrong key or a changed byte)"
        case .libraryFailure(let step): "libcrypto failed \(step)"
        }
    }
}
