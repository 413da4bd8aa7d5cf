// The built-in DS-D6 band adapter as a protocol-2 external adapter executable,
// `ingestd-adapter-dsd6-band`: proof that a Swift conversing adapter becomes a plugin that holds
// its conversation through the daemon, with one line.
import DSD6Band
import ExternalAdapterProtocol

ExternalAdapterMain.run(conversing: DSD6BandAdapter())
