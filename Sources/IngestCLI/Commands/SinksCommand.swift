import Delivery
import ArgumentParsing
import Foundation
import Pipeline

/// `ingestd sinks`: named reading clients that receive the change feed (MQTT, HTTP).
struct SinksCommand: Command {
    static let configuration = CommandConfiguration(
        name: "sinks", abstract: "Send samples elsewhere: MQTT (Home Assistant) and HTTP receivers with durable cursors.",
        discussion: """
            A sink reads the change feed of the types granted to it (default: none) and moves its \
            cursor only after the receiver acknowledged (MQTT PUBACK, HTTP 2xx). A running 'ingestd' \
            delivers to every sink within about 100 ms of a commit (or on --every), retrying with \
            backoff; SIGHUP re-reads the sinks. Records a receiver refuses for good (HTTP 4xx other \
            than 408/429) go to the sink's dead letters.
            """,
        subcommands: [SinksAddCommand.self, SinksListCommand.self, SinksRevokeCommand.self, SinksRemoveCommand.self, SinksDeliverCommand.self,
                      SinksDeadLettersCommand.self, SinksRetryCommand.self],
        examples: [
            "ingestd sinks list",
            "ingestd sinks add alice-server https://health.example/alice --types stepCount,bodyMass --person alice",
        ]
    )

    init(_ arguments: ParsedValues) throws {}

    /// Maps store and configuration errors of sink commands to clear CLI errors.
    static func mapErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SinkStoreError {
            throw CommandError.sinkStore(error)
        } catch let error as SinkConfigurationError {
            throw CommandError.sinkConfiguration(error)
        }
    }
}
