import AdapterKit

extension DeliveryReceipt {
    /// A commit that stored every record of `output` (nothing held): what a granted source gets.
    static func storedAll(_ output: AdapterOutput) -> DeliveryReceipt {
        DeliveryReceipt(stored: output.records.count, held: 0)
    }
}
