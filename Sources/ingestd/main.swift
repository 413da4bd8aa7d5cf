import ArgumentParsing
import IngestCLI

// No top-level `await`: help, the version and usage errors are answered, and a machine without
// /proc refused, on the main thread before any task runs (CommandLineRunner.start says why).
CommandLineRunner.start(root: Ingestd.self)
