import Foundation
import Testing
import TestSupport

/// An independent FHIR R4 implementation for the tests: the `fhir.resources` Python package
/// (6.4.0, the last release whose models are R4 4.0.1; pydantic 1) in a virtual environment under
/// the package's `.build/fhir-r4-venv`, made once and reused. Making it needs PyPI; without it the
/// tests that validate fail with the reason (they do not skip).
enum FHIRValidator {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let environment = packageRoot.appendingPathComponent(".build/fhir-r4-venv")
    static var python: String { environment.appendingPathComponent("bin/python").path }

    /// Parses a Bundle with `fhir.resources.bundle.Bundle` (which validates every nested
    /// resource) and prints one JSON object per entry: fullUrl, resource type, identifier, codes,
    /// UCUM units and values, effective, request. Exit 1 with pydantic's complaint when invalid.
    static let script = #"""
        import json, sys
        import fhir.resources
        from fhir.resources.bundle import Bundle
        assert fhir.resources.__fhir_version__ == "4.0.1", fhir.resources.__fhir_version__
        try:
            bundle = Bundle.parse_file(sys.argv[1])
        except Exception as error:
            print("INVALID: " + str(error).replace("\n", " | "))
            sys.exit(1)
        print(json.dumps({"type": bundle.type, "entries": len(bundle.entry or [])}))
        def quantity(q):
            return None if q is None else {"value": float(q.value), "unit": q.unit, "system": q.system, "code": q.code}
        for entry in bundle.entry or []:
            resource = entry.resource
            out = {"fullUrl": entry.fullUrl, "resourceType": resource.resource_type,
                   "identifier": [[i.system, i.value] for i in resource.identifier or []],
                   "status": resource.status,
                   "code": [[c.system, c.code] for c in resource.code.coding],
                   "category": [c.code for cat in (resource.category or []) for c in cat.coding],
                   "value": quantity(resource.valueQuantity),
                   "components": [[[c.system, c.code] for c in comp.code.coding] + [quantity(comp.valueQuantity)]
                                  for comp in resource.component or []],
                   "effectiveDateTime": resource.effectiveDateTime.isoformat() if resource.effectiveDateTime else None,
                   "effectivePeriod": [resource.effectivePeriod.start.isoformat(), resource.effectivePeriod.end.isoformat()]
                                      if resource.effectivePeriod else None,
                   "device": resource.device.display if resource.device else None,
                   "request": [entry.request.method, entry.request.url, entry.request.ifNoneExist]}
            print(json.dumps(out))
        """#

    /// Made once per test process (a Swift static is initialized exactly once).
    static let ready: Result<String, ValidatorUnavailable> = prepare()

    struct ValidatorUnavailable: Error, CustomStringConvertible {
        var description: String
    }

    private static func prepare() -> Result<String, ValidatorUnavailable> {
        let check = "import fhir.resources, pydantic; assert fhir.resources.__fhir_version__ == '4.0.1'"
        if FileManager.default.isExecutableFile(atPath: python), (try? run(python, ["-c", check], limit: 60))?.status == 0 {
            return .success(python)
        }
        // Debian's python3 (python3-venv, scripts/bootstrap-tests) first, else whatever python3 is on PATH.
        let base = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3"
        do {
            try? FileManager.default.removeItem(at: environment)
            let venv = try run("/usr/bin/env", [base, "-m", "venv", environment.path], limit: 120)
            guard venv.status == 0 else { return .failure(.init(description: "python3 -m venv failed: \(venv.output)")) }
            let pip = try run(python, ["-m", "pip", "install", "--disable-pip-version-check", "-q",
                                       "fhir.resources==6.4.0", "pydantic>=1.10,<2"], limit: 600)
            guard pip.status == 0 else { return .failure(.init(description: "pip install fhir.resources failed: \(pip.output)")) }
            let verify = try run(python, ["-c", check], limit: 60)
            guard verify.status == 0 else { return .failure(.init(description: "fhir.resources is not R4: \(verify.output)")) }
            return .success(python)
        } catch {
            return .failure(.init(description: "cannot make the FHIR validator: \(error)"))
        }
    }

    /// The parsed entries of the Bundle in `text`, or the validator's complaint.
    static func validate(_ text: String) throws -> (valid: Bool, lines: [[String: Any]], complaint: String) {
        let interpreter = try ready.get()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-\(UUID().uuidString).json")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try run(interpreter, ["-c", script, file.path], limit: 300)
        if result.status != 0 { return (false, [], result.output) }
        let lines = try result.output.split(separator: "\n").map { line -> [String: Any] in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
        }
        return (true, lines, "")
    }

    /// Runs a program, bounded in time (killed past `limit`), with stdout and stderr together.
    static func run(_ program: String, _ arguments: [String], limit: TimeInterval) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        let reader = PipeReader(pipe.fileHandleForReading)
        if finished.wait(timeout: .now() + limit) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            _ = finished.wait(timeout: .now() + 5)
            return (-1, "timed out after \(Int(limit)) s: " + reader.text())
        }
        return (process.terminationStatus, reader.text())
    }
}
