import Foundation
import PostgresStore

/// Delivers to a shared PostgreSQL database: the schema is created or migrated on first contact,
/// each batch is one transaction (`PostgresSampleWriter`: new samples by a binary COPY into the
/// table, else COPY into staging and upsert by (gateway, uuid) with this gateway's id and the person,
/// tombstones marked deleted). The deliverer reads the next batch while this one is sent. A committed transaction is the acknowledgement. Data errors
/// (SQLSTATE classes 22 and 23) refuse the batch for good, except a character the database's
/// encoding cannot hold (22P05): that database is misconfigured for ingestd, like a refused login,
/// a missing privilege (42501) or a gateway id of another store; those and anything else are retried.
final class PostgresSinkTransport: SinkTransport {
    private let configuration: SinkConfiguration
    private let options: PostgresSinkOptions
    private let secrets: SecretResolver
    private var writer: PostgresSampleWriter?

    init(_ configuration: SinkConfiguration, options: PostgresSinkOptions, secrets: SecretResolver) {
        self.configuration = configuration
        self.options = options
        self.secrets = secrets
    }

    var wantsDailyTotals: Bool { false }

    /// While the server writes a batch the client is idle: the deliverer reads the next one meanwhile.
    var sendsWhileTheNextBatchIsRead: Bool { true }

    private var targetName: String { "PostgreSQL \(configuration.target.displayURL)" }

    private func connected(_ context: DeliveryContext) throws(SinkDeliveryError) -> PostgresSampleWriter {
        if let writer { return writer }
        let password = try secrets.password(option: options.password, target: configuration.target)
        do {
            let schema = try PostgresSchema(name: options.schema ?? PostgresSchema.defaultName)
            let connection = try PostgresConnection(url: configuration.target.urlWithoutCredentials, password: password,
                                                    timeoutSeconds: max(1, Int(options.timeoutSeconds)))
            let writer = try PostgresSampleWriter(connection: connection, schema: schema, gateway: options.gatewayID,
                                                  storeIdentity: context.storeIdentity)
            self.writer = writer
            return writer
        } catch {
            throw failure(error)
        }
    }

    /// What a PostgreSQL error means for delivery: a configuration to fix, or an outage.
    private func failure(_ error: PostgresError) -> SinkDeliveryError {
        let sink = configuration.name
        switch error {
        case .authenticationFailed:
            return .misconfigured(target: targetName, reason: error.description,
                                  fix: "check the user, the password (sinks add --password) and the database of sink \(sink)")
        case .gatewayTaken(let gateway, _):
            return .misconfigured(target: targetName, reason: error.description, fix: """
                give this store its own gateway id: 'ingestd sinks remove \(sink)', then 'ingestd sinks add \(sink) URL \
                --gateway-id ID …' with an id other than '\(gateway)'
                """)
        case .statementFailed(_, "22P05", _):
            return .misconfigured(target: targetName, reason: error.description, fix: """
                the database's encoding cannot hold every character of the samples: deliver to a UTF8 database \
                (CREATE DATABASE … ENCODING 'UTF8' TEMPLATE template0); nothing was dead-lettered
                """)
        case .statementFailed(_, let state, _) where state.hasPrefix("28") || state == "42501":
            return .misconfigured(target: targetName, reason: error.description,
                                  fix: "grant the sink's user the privileges on the schema of sink \(sink) (or use another user)")
        default:
            return .unreachable(target: targetName, reason: error.description)
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
        let writer = try connected(context)
        do {
            try writer.write(Self.changes(records))
            return .accepted
        } catch {
            close()
            if case .statementFailed(_, let state, let message) = error, state != "22P05", state.hasPrefix("22") || state.hasPrefix("23") {
                return .rejected(reason: "SQLSTATE \(state): \(message)")
            }
            throw failure(error)
        }
    }

    func idle(milliseconds: Int) {}

    func close() {
        writer?.connection.close()
        writer = nil
    }
}
