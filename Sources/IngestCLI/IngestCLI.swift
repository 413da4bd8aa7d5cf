/// Entry point of the `ingestd` executable.
public enum IngestdMain {
    public static func main() async {
        print("ingestd")
    }
}
