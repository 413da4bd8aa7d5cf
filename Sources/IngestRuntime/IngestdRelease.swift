/// The release of ingestd this build is (the CLI's `--version`, the daemon's start line).
public enum IngestdRelease {
    /// The version string.
    public static let version = "0.1.0"
}
