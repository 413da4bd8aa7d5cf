import CResidentMemory
import Foundation
import Logging

/// The pages of ingestd's own code that start-up touched (option parsing, store migrations, the
/// adapter registries, device enumeration), handed back to the kernel once the daemon has started.
///
/// An idle daemon runs a few hundred kilobytes of its code; start-up faults in about 15 MB of it
/// (with the kernel's fault-around). `madvise(MADV_PAGEOUT)` on the executable's read-only
/// segments returns them: nothing is lost, a page run again is read back from the file. Writable
/// segments are not touched.
enum StartupPages {
    /// How long after start the pages are returned: the backends' own start-up (hotplug
    /// enumeration, the first scan) is over by then.
    static let delay: Duration = .seconds(5)

    /// Returns the executable's resident read-only pages; the outcome is logged at debug level.
    static func release(logger: Logger) {
        var advised = 0
        let error = cresident_release_executable_pages(&advised)
        if error == 0 {
            logger.debug("returned the start-up pages of the executable's read-only segments (\(advised / 1_048_576) MB advised)")
        } else {
            logger.debug("the start-up pages stay resident: madvise(MADV_PAGEOUT) failed: \(String(cString: strerror(error)))")
        }
    }
}
