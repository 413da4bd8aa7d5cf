import Foundation
import HealthModel
import PostgresStore

/// Delivers to a shared PostgreSQL database: the schema is created or migrated on first contact,
/// each batch is one transaction (`PostgresSampleWriter`: new samples by a binary COPY into the
/// table, else COPY into staging and upsert by uuid with this gateway's id and the person,
/// tombstones marked deleted). The deliverer reads the next batch while this one is sent. A committed transaction is the acknowledgement. Data errors
/// (SQLSTATE classes 22 and 23) refuse the batch for good; anything else is retried.
final class PostgresSinkTransport: SinkTransport {
    private let configuration: SinkConfiguration
    private let secrets: SecretResolver
    private var writer: PostgresSampleWriter?

    init(_ configuration: SinkConfiguration, secrets: SecretResolver) {
        self.configuration = configuration
        self.secrets = secrets
    }

    var wantsDailyTotals: Bool { false }

    /// While the server writes a batch the client is idle: the deliverer reads the next one meanwhile.
    var sendsWhileTheNextBatchIsRead: Bool { true }

    private var targetName: String { "PostgreSQL \(configuration.target.displayURL)" }

    private func connected() throws(SinkDeliveryError) -> PostgresSampleWriter {
        if let writer { return writer }
        let options = configuration.options
        var password: String?
        do {
            if let reference = options.password ?? configuration.target.password {
                password = try secrets.resolve(reference)
            }
        } catch {
            throw .configuration(error)
        }
        do {
            let schema = try PostgresSchema(name: options.schema ?? PostgresSchema.defaultName)
            let connection = try PostgresConnection(url: configuration.target.urlWithoutCredentials, password: password,
                                                    timeoutSeconds: max(1, Int(options.timeoutSeconds)))
            let writer = try PostgresSampleWriter(connection: connection, schema: schema, gateway: options.gatewayID)
            self.writer = writer
            return writer
        } catch {
            throw .unreachable(target: targetName, reason: error.description)
        }
    }

    /// The changes of `records` in order: samples upserted, deletions as tombstones.
    static func changes(_ records: [OutgoingRecord]) -> [PostgresChange] {
        records.map { record in
            if let sample = record.sample {
                .upsert(sample, record: record.json, person: record.person.isEmpty ? nil : record.person, anchor: record.anchor)
            } else {
                .delete(uuid: record.uuid, anchor: record.anchor)
            }
        }
    }

    func send(_ records: [OutgoingRecord], context: DeliveryContext) throws(SinkDeliveryError) -> SendResult {
        let writer = try connected()
        do {
            try writer.write(Self.changes(records))
            return .accepted
        } catch {
            close()
            if case .statementFailed(_, let state, let message) = error, state.hasPrefix("22") || state.hasPrefix("23") {
                return .rejected(reason: "SQLSTATE \(state): \(message)")
            }
            throw .unreachable(target: targetName, reason: error.description)
        }
    }

    func idle(milliseconds: Int) {}

    func close() {
        writer?.connection.close()
        writer = nil
    }
}
