import CCrypto

/// AES-128 in CCM mode (RFC 3610) through OpenSSL's libcrypto (EVP): what Xiaomi MiBeacon v4/v5
/// and BTHome v2 use to encrypt and authenticate their advertisements.
///
/// One instance holds one cipher context and is used by one thread at a time (a device's
/// session, a benchmark loop); it is set up afresh for every message, so keys and nonces may
/// change from call to call. Nothing here keeps a key after a call returns.
public final class AESCCM {
    private let context: OpaquePointer

    /// - Throws: ``AESCCMError/contextUnavailable`` when libcrypto cannot allocate a context.
    public init() throws(AESCCMError) {
        guard let context = EVP_CIPHER_CTX_new() else { throw .contextUnavailable }
        self.context = context
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    /// The plaintext of `ciphertext` when `tag` authenticates it (with `associatedData`) under
    /// `key` and `nonce`; nil when it does not (a wrong key, a changed byte, a wrong nonce).
    ///
    /// - Parameters:
    ///   - key: 16 bytes.
    ///   - nonce: 7 to 13 bytes.
    ///   - tag: the MIC, 4 to 16 bytes (even).
    public func open(key: [UInt8], nonce: [UInt8], ciphertext: ArraySlice<UInt8>, tag: ArraySlice<UInt8>,
                     associatedData: [UInt8] = []) throws(AESCCMError) -> [UInt8]? {
        try Self.check(key: key, nonce: nonce, tagLength: tag.count)
        EVP_CIPHER_CTX_reset(context)
        var tagBytes = Array(tag)
        var length: Int32 = 0
        var plaintext = [UInt8](repeating: 0, count: max(1, ciphertext.count))
        let ready = EVP_DecryptInit_ex(context, EVP_aes_128_ccm(), nil, nil, nil) == 1
            && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonce.count), nil) == 1
            && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tagBytes.count), &tagBytes) == 1
            && EVP_DecryptInit_ex(context, nil, nil, key, nonce) == 1
            && EVP_DecryptUpdate(context, nil, &length, nil, Int32(ciphertext.count)) == 1
        guard ready else { throw .libraryFailure("setting up the decryption") }
        if !associatedData.isEmpty {
            guard EVP_DecryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)) == 1 else {
                throw .libraryFailure("taking the associated data")
            }
        }
        // With CCM the last update both decrypts and checks the tag: anything but 1 is a MIC mismatch.
        let authentic = ciphertext.withUnsafeBufferPointer { input in
            EVP_DecryptUpdate(context, &plaintext, &length, input.baseAddress ?? UnsafePointer(plaintext),
                              Int32(input.count)) == 1
        }
        guard authentic else { return nil }
        return Array(plaintext.prefix(ciphertext.count))
    }

    /// Encrypts `plaintext` and computes its tag of `tagLength` bytes (for tests and benchmarks
    /// that make frames the way a device does).
    public func seal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8], tagLength: Int = 4,
                     associatedData: [UInt8] = []) throws(AESCCMError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        try Self.check(key: key, nonce: nonce, tagLength: tagLength)
        EVP_CIPHER_CTX_reset(context)
        var length: Int32 = 0
        var ciphertext = [UInt8](repeating: 0, count: max(1, plaintext.count))
        var tag = [UInt8](repeating: 0, count: tagLength)
        let ready = EVP_EncryptInit_ex(context, EVP_aes_128_ccm(), nil, nil, nil) == 1
            && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonce.count), nil) == 1
            && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tagLength), nil) == 1
            && EVP_EncryptInit_ex(context, nil, nil, key, nonce) == 1
            && EVP_EncryptUpdate(context, nil, &length, nil, Int32(plaintext.count)) == 1
        guard ready else { throw .libraryFailure("setting up the encryption") }
        if !associatedData.isEmpty {
            guard EVP_EncryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)) == 1 else {
                throw .libraryFailure("taking the associated data")
            }
        }
        let sealed = plaintext.withUnsafeBufferPointer { input in
            EVP_EncryptUpdate(context, &ciphertext, &length, input.baseAddress ?? UnsafePointer(ciphertext),
                              Int32(input.count)) == 1
        }
        guard sealed, EVP_EncryptFinal_ex(context, &ciphertext, &length) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(tagLength), &tag) == 1
        else { throw .libraryFailure("encrypting") }
        return (Array(ciphertext.prefix(plaintext.count)), tag)
    }

    private static func check(key: [UInt8], nonce: [UInt8], tagLength: Int) throws(AESCCMError) {
        guard key.count == 16 else { throw .keyLength(key.count) }
        guard (7...13).contains(nonce.count) else { throw .nonceLength(nonce.count) }
        guard (4...16).contains(tagLength), tagLength % 2 == 0 else { throw .tagLength(tagLength) }
    }
}

/// Why AES-CCM could not run (never a key's bytes: only lengths and what failed).
public enum AESCCMError: Error, Equatable, Sendable, CustomStringConvertible {
    case contextUnavailable
    case keyLength(Int)
    case nonceLength(Int)
    case tagLength(Int)
    case libraryFailure(String)

    public var description: String {
        switch self {
        case .contextUnavailable: "libcrypto could not allocate a cipher context"
        case .keyLength(let count): "an AES-128 key has 16 bytes, not \(count)"
        case .nonceLength(let count): "a CCM nonce has 7 to 13 bytes, not \(count)"
        case .tagLength(let count): "a CCM tag has an even 4 to 16 bytes, not \(count)"
        case .libraryFailure(let step): "libcrypto failed \(step)"
        }
    }
}
