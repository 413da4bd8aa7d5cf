import CCurl
import SinkLibraries
import Foundation

/// libcurl is initialised once per process (its first use).
private let curlLibrary: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

/// The response body kept for messages: at most `limit` bytes, the rest counted and dropped.
final class CurlResponseBuffer {
    static let limit = 2048
    var bytes: [UInt8] = []
}

/// What an HTTP receiver answered.
struct HTTPResponse {
    var status: Int
    /// The start of the body (at most `CurlResponseBuffer.limit` bytes), for messages.
    var body: String
    var location: String
}

/// One libcurl easy handle: POSTs a body with headers, TLS verification on, redirects never
/// followed, only http and https, a whole-request timeout.
final class CurlClient {
    private let handle: UnsafeMutableRawPointer
    let target: String

    init(target: String) throws(SinkDeliveryError) {
        // libcurl is opened on first use (an ingestd without an HTTP sink never maps it).
        do { try DynamicLibrary.curl.load() } catch {
            throw .misconfigured(target: target, reason: "\(error.library.soname) cannot be loaded: \(error.reason)", fix: error.fix)
        }
        _ = curlLibrary
        self.target = target
        guard let handle = curl_easy_init() else {
            throw .unreachable(target: target, reason: "cannot create an HTTP client (libcurl)")
        }
        self.handle = handle
    }

    deinit {
        curl_easy_cleanup(handle)
    }

    func post(url: String, body: [UInt8], headers: [String], timeout: Double, caFile: String?)
        throws(SinkDeliveryError) -> HTTPResponse {
        curl_easy_reset(handle)
        let buffer = CurlResponseBuffer()
        var list: UnsafeMutablePointer<curl_slist>?
        for header in headers + ["Content-Type: application/json", "Expect:"] {
            list = curl_slist_append(list, header)
        }
        defer { curl_slist_free_all(list) }
        ccurl_setopt_string(handle, CURLOPT_URL, url)
        ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
        ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2)
        ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Int(max(1, timeout * 1000)))
        ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, min(timeout, 10) * 1000)))
        if let caFile { ccurl_setopt_string(handle, CURLOPT_CAINFO, caFile) }
        ccurl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list))
        ccurl_setopt_long(handle, CURLOPT_POST, 1)
        ccurl_setopt_write_function(handle) { data, size, count, context in
            let total = size * count
            guard let data, let context else { return total }
            let buffer = Unmanaged<CurlResponseBuffer>.fromOpaque(context).takeUnretainedValue()
            let room = CurlResponseBuffer.limit - buffer.bytes.count
            if room > 0 {
                let raw = UnsafeRawBufferPointer(start: data, count: min(room, total))
                buffer.bytes.append(contentsOf: raw)
            }
            return total
        }
        let code: CURLcode = withExtendedLifetime(buffer) {
            ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(buffer).toOpaque())
            return body.withUnsafeBufferPointer { bytes in
                ccurl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, bytes.count)
                ccurl_setopt_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                return curl_easy_perform(handle)
            }
        }
        guard code == CURLE_OK else {
            let reason = String(cString: curl_easy_strerror(code))
            if code == CURLE_OPERATION_TIMEDOUT {
                throw .timedOut(target: target, seconds: timeout, waitingFor: "HTTP response")
            }
            throw .unreachable(target: target, reason: reason)
        }
        var status = 0
        ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var locationPointer: UnsafeMutablePointer<CChar>?
        ccurl_getinfo_string(handle, CURLINFO_REDIRECT_URL, &locationPointer)
        let location = locationPointer.map { String(cString: $0) } ?? ""
        let text = String(decoding: buffer.bytes, as: UTF8.self)
        return HTTPResponse(status: status, body: Self.oneLine(text), location: location)
    }

    /// A body as one short line for messages.
    static func oneLine(_ text: String) -> String {
        let flat = text.map { $0.isNewline || $0 == "\t" ? " " : $0 }
        let trimmed = String(flat).trimmingCharacters(in: .whitespaces)
        return trimmed.count > 200 ? String(trimmed.prefix(200)) + "…" : trimmed
    }
}

/// Delivers to an HTTP receiver: POSTs batches as JSON (`samples` or `health-auto-export`);
/// 2xx accepts, 4xx other than 401/403/408/429 rejects the batch for good, everything else
/// (401 and 403 as an authentication failure) is retried.
final class HTTPSinkTransport: SinkTransport {
    private let configuration: SinkConfiguration
    private let options: HTTPSinkOptions
    private let secrets: SecretResolver
    private var client: CurlClient?

    init(_ configuration: SinkConfiguration, options: HTTPSinkOptions, secrets: SecretResolver) {
        self.configuration = configuration
        self.options = options
        self.secrets = secrets
    }

    var wantsDailyTotals: Bool { false }

    private var targetName: String { "HTTP receiver \(configuration.target.displayURL)" }

    func send(_ records: [OutgoingRecord], context: DeliveryContext) throws(SinkDeliveryError) -> SendResult {
        var headers: [String] = []
        do {
            headers = try options.headers.map { line throws(SinkConfigurationError) in try secrets.resolveHeader(line) }
        } catch {
            throw .configuration(error)
        }
        if let basic = try secrets.basicAuthorization(configuration.target) { headers.append("Authorization: Basic " + basic) }
        let body: String = switch options.format {
        case .samples: HTTPBody.samples(records)
        case .healthAutoExport: HTTPBody.healthAutoExport(records)
        }
        let client: CurlClient
        if let existing = self.client {
            client = existing
        } else {
            client = try CurlClient(target: targetName)
            self.client = client
        }
        let response = try client.post(url: configuration.target.urlWithoutCredentials, body: Array(body.utf8),
                                       headers: headers, timeout: options.timeoutSeconds,
                                       caFile: options.caFile)
        switch response.status {
        case 200..<300:
            return .accepted
        case 300..<400:
            throw .redirectRefused(target: targetName, status: response.status, location: response.location)
        case 408, 429:
            throw .serverError(target: targetName, status: response.status, body: response.body)
        case 401, 403:
            // The credentials are wrong or not allowed: the configuration must change, the records
            // are fine. Retried and reported, never dead-lettered.
            throw .misconfigured(target: targetName,
                                 reason: "refused the credentials: HTTP \(response.status)" + (response.body.isEmpty ? "" : ": \(response.body)"),
                                 fix: SinkDeliveryError.refusedCredentialsFix)
        case 400..<500:
            return .rejected(reason: "HTTP \(response.status)" + (response.body.isEmpty ? "" : ": \(response.body)"))
        default:
            throw .serverError(target: targetName, status: response.status, body: response.body)
        }
    }

    func idle(milliseconds: Int) {}

    func close() {
        client = nil
    }
}
