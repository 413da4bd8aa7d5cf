import IngestCLI

await IngestdMain.main()
