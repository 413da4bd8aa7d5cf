import ArgumentParsing
import IngestCLI

await CommandLineRunner.main(root: Ingestd.self)
