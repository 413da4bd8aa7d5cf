import AdapterKit
import Foundation
@testable import IngestRuntime
import Testing

/// The catalogue: every built-in adapter lists the models it covers, each model's capture is one of
/// the adapter's own (so the fixtures that check routing also back the published table), and the
/// README's device table is the one the models make (`scripts/update-device-table` rewrites it).
@Suite struct DeviceTableTests {
    private var descriptors: [AdapterDescriptor] { AdapterCatalogue.builtInDescriptors }

    @Test func everyAdapterListsItsModelsAndHow() {
        for descriptor in descriptors {
            #expect(!descriptor.models.isEmpty, "\(descriptor.id) lists no models")
            #expect(!descriptor.how.isEmpty, "\(descriptor.id) does not say how it gets its data")
            for model in descriptor.models {
                let foreign = model.reads.filter { !descriptor.produces.contains($0) }
                #expect(foreign.isEmpty, "\(descriptor.id) / \(model.name) reads \(foreign.map(\.shortName)), which the adapter does not produce")
            }
        }
    }

    /// A model's capture is a good (not `bad-`) capture in the adapter's own folder, which the
    /// catalogue tests replay to its expected output and route to this adapter.
    @Test func everyModelCaptureIsOneOfTheAdaptersOwn() {
        let fixtures = Captures.all
        for descriptor in descriptors {
            for model in descriptor.models {
                guard let capture = model.capture else { continue }
                let found = fixtures.first { $0.folder == descriptor.id && $0.name == capture }
                #expect(found != nil, "\(descriptor.id) / \(model.name): no capture Captures/\(descriptor.id)/\(capture).*")
                #expect(found?.isBad != true, "\(descriptor.id) / \(model.name): \(capture) is a bad- capture")
            }
        }
    }

    @Test func readmeDeviceTableIsTheGeneratedOne() throws {
        let readme = try String(contentsOf: Captures.directory.appendingPathComponent("../../../README.md").standardized,
                                encoding: .utf8)
        let section = try #require(DeviceTable.section(in: readme), "README.md has no device-table markers")
        let generated = DeviceTable.markdown(descriptors)
        #expect(section == generated, """
            README.md's device table differs from the adapters' models: run scripts/update-device-table
            \(zip(section.split(separator: "\n"), generated.split(separator: "\n")).first { $0 != $1 }.map { "README: \($0)\nmodels: \($1)" } ?? "")
            """)
    }
}
