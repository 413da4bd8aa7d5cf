import AdapterKit
import BlueZTransport
import Foundation
import Logging
import Transport

extension BluetoothBackend {
    /// One conversation with a device whose adapter talks to it (its own conversation, or the
    /// declarations of a ``ConnectingAdapter`` as the simplest one):
    /// connect, run the adapter's conversation over the GATT client, commit each batch it
    /// delivers before the conversation goes on (so it may erase only what was committed), and
    /// disconnect. Returns whether the conversation ended without an error.
    static func converse(with advertisement: BLEAdvertisement, adapter: any BLEAdapter, traits: BLEDeviceTraits,
                         link: BluetoothLink, service: IngestService, timeZone: TimeZone,
                         options: [String: String] = [:], runState: AdapterRunState = AdapterRunState(),
                         advice: ControllerAdvice? = nil,
                         logger: Logger) async -> Bool {
        let client: GATTClient
        do {
            client = try await link.connect(advertisement.address, advertisement.addressType,
                                            BluetoothLinkOptions(log: logSink(logger)))
        } catch {
            logger.warning("connecting failed: \(error)")
            advice?.connectFailed(error)
            return false
        }
        let context = AdapterContext(
            timeZone: timeZone, source: adapter.descriptor.id,
            memory: StoreDeviceMemory(service: service, adapter: adapter.descriptor.id), options: options, run: runState)
        return await converse(over: client, adapter: adapter, traits: traits, context: context, logger: logger) { output in
            guard !output.records.isEmpty else { return DeliveryReceipt(stored: 0, held: 0) }
            return DeliveryReceipt(try await service.ingest(output.records, origin: "ble"))
        }
    }

    /// Runs the adapter's conversation over a connected GATT client, handing each batch to
    /// `deliver` (the daemon commits it; `ingestd capture` stores nothing), then disconnects.
    /// Rejections and explanations are logged. Returns whether the conversation ended without an error.
    static func converse(over client: GATTClient, adapter: any BLEAdapter, traits: BLEDeviceTraits,
                         context: AdapterContext, logger: Logger,
                         deliver: @escaping (AdapterOutput) async throws -> DeliveryReceipt) async -> Bool {
        logger.info("connected (\(adapter.descriptor.id), conversation)")
        guard let conversation = adapter.conversation(for: traits, context: context) else {
            await client.disconnect()
            return false
        }
        // As many values wait for the conversation as it may receive in one contact: none is dropped.
        let conversationLink = GATTClientConversationLink(client: client, maximumQueued: conversation.maximumValuesPerContact)
        await conversationLink.start()
        var succeeded = true
        await withTaskCancellationHandler {
            do {
                try await conversation.run(over: conversationLink) { output in
                    // A conversation's rejections are few and their detail says what to do (pair the device,
                    // put it in pairing mode, fix an option), so it is logged with them.
                    for rejection in output.rejections {
                        logger.warning("frame rejected by \(rejection.adapter): \(rejection.reason): \(rejection.detail)")
                    }
                    // What the conversation explains (a device feature that did not answer) is said too.
                    for explanation in output.explanations { logger.warning("\(explanation)") }
                    return try await deliver(output)
                }
            } catch {
                logger.warning("conversation ended: \(error)")
                succeeded = false
            }
        } onCancel: {
            Task { await client.disconnect() }
        }
        await client.disconnect()
        let refused = await conversationLink.refusedValues
        if refused > 0 {
            let limit = conversationLink.maximumQueued
            let message = "contact with \(traits.address) ended: it sent \(refused) notification\(refused == 1 ? "" : "s") past "
                + "the \(limit) that \(adapter.descriptor.id) may receive in one contact before reading them; nothing on the "
                + "device was acknowledged or erased, what was committed stays and the next contact continues"
            logger.error("\(message)")
            succeeded = false
        }
        logger.info("disconnected")
        return succeeded
    }
}
