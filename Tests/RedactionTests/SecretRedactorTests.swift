import Foundation
import Redaction
import Testing

@Suite struct SecretRedactorTests {
    @Test func rememberedSecretsAreReplacedInEveryForm() {
        let redactor = SecretRedactor()
        redactor.remember("s3cr3t/pa\"ss word")
        let text = """
            raw s3cr3t/pa"ss word, percent s3cr3t%2Fpa%22ss%20word, json s3cr3t\\/pa\\"ss word, \
            base64 \(Data("s3cr3t/pa\"ss word".utf8).base64EncodedString())
            """
        let redacted = redactor.redact(text)
        #expect(redacted == "raw [redacted], percent [redacted], json [redacted], base64 [redacted]")
        #expect(redactor.redact("") == "")
        redactor.remember("")
        #expect(redactor.redact("nothing here") == "nothing here")
    }

    @Test func urlCredentialsAreReplacedWithoutKnowingThem() {
        #expect(SecretRedactor.redactingCredentials("postgresql://u:hunter2@db:5432/x?sslmode=require&password=pw1&Token=t2 next")
                == "postgresql://u:[redacted]@db:5432/x?sslmode=require&password=[redacted]&Token=[redacted] next")
        #expect(SecretRedactor.redactingCredentials("host=db password=pw user=me") == "host=db password=[redacted] user=me")
        #expect(SecretRedactor.redactingCredentials("mqtt://user@host:1883 and http://h/p?a=1") == "mqtt://user@host:1883 and http://h/p?a=1")
        #expect(SecretRedactor.redactingCredentials("mypassword=x") == "mypassword=x")
        #expect(SecretRedactor.redactingCredentials("no url: a:b@c") == "no url: a:b@c")
    }

    @Test func aSecretContainingAnotherIsReplacedWhole() {
        let redactor = SecretRedactor(secrets: ["abc", "abcdef"])
        #expect(redactor.redact("xabcdefx abc") == "x[redacted]x [redacted]")
    }
}
