// The built-in Xiaomi scale adapter as an external adapter executable, `ingestd-adapter-xiaomi-scale`:
// proof that any Swift adapter becomes a plugin with one line.
import ExternalAdapterProtocol
import XiaomiScale

ExternalAdapterMain.run(XiaomiScaleAdapter())
