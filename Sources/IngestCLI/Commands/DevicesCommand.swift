import ArgumentParsing

/// `ingestd devices`: the USB devices present (`list`, the default) and whose a device is (`assign`).
struct DevicesCommand: Command {
    static let configuration = CommandConfiguration(
        name: "devices", abstract: "List the USB devices present; say whose a device is.",
        subcommands: [DevicesListCommand.self, DevicesAssignCommand.self, DevicesSetCommand.self], defaultSubcommand: DevicesListCommand.self)

    init(_ arguments: ParsedValues) throws {}
}
