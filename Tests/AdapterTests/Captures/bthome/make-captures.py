#!/usr/bin/env python3
"""Builds the bthome captures in this folder from published bytes (BTHome v2 advertisements).

Run from anywhere: `python3 Tests/AdapterTests/Captures/bthome/make-captures.py`
(it rewrites every generated file in this folder). The shared btsnoop writer and
record builders are in scripts/ble_capture_kit.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403


# MARK: - bthome

BTHOME = "bthome"
BTHOME_ADDRESS = "A4:C1:38:8D:18:B2"  # the address bthome-ble's tests use


def bthome_advertisement(capture, name, payload):
    data = flags_ad() + service_data_ad(0xFCD2, payload) + name_ad(name)
    capture.advertising_report(BTHOME_ADDRESS, data, event_type=0x00, rssi=-60)


def bthome_mass_case(capture):
    """bthome-ble tests/test_parser_v2.py: test_bthome_mass_kilograms (80.3 kg),
    test_bthome_mass_pounds (74.86 lb)."""
    times = []
    for payload in [h("40 06 5E 1F"), h("40 07 3E 1D")]:
        bthome_advertisement(capture, "TEST DEVICE", payload)
        times.append(capture.at())
        capture.advance(1000)
    device = device_json(name="TEST DEVICE", localIdentifier=BTHOME_ADDRESS)
    return [
        sample("BodyMass", 80.3, "kg", times[0], source=BTHOME, device=device, metadata=metadata_json()),
        sample("BodyMass", 74.86, "lb", times[1], source=BTHOME, device=device, metadata=metadata_json()),
    ]


def bthome_temperature_case(capture):
    """bthome-ble tests/test_parser_v2.py: test_bthome_temperature_humidity (25.06 °C),
    test_bthome_packet_id_temperature_humidity_battery (23.97 °C; sent twice, the repeat is
    dropped), test_bthome_double_temperature (25.06 and 25.11 °C)."""
    payloads = [
        h("40 02 CA 09 03 BF 13"),
        h("40 00 09 01 5D 02 5D 09 03 B7 18"),
        h("40 00 09 01 5D 02 5D 09 03 B7 18"),
        h("40 02 CA 09 02 CF 09"),
    ]
    times = []
    for payload in payloads:
        bthome_advertisement(capture, "ATC_8D18B2", payload)
        times.append(capture.at())
        capture.advance(1000)
    device = device_json(name="ATC_8D18B2", localIdentifier=BTHOME_ADDRESS)
    ambient = "IngestQuantityTypeIdentifierAmbientTemperature"
    return [
        sample(ambient, 25.06, "degC", times[0], source=BTHOME, device=device, metadata=metadata_json()),
        sample(ambient, 23.97, "degC", times[1], source=BTHOME, device=device, metadata=metadata_json()),
        sample(ambient, 25.06, "degC", times[3], source=BTHOME, device=device, metadata=metadata_json()),
        sample(ambient, 25.11, "degC", times[3], source=BTHOME, device=device, metadata=metadata_json()),
    ]


def bad_bthome_case(capture):
    """bthome-ble tests/test_parser_v2.py: test_bthome_wrong_object_id, test_bthome_battery_wrong_object_id_humidity,
    test_has_incorrect_version; and the 25.06 °C packet cut inside its temperature (synthetic)."""
    payloads = [
        h("40 FE CA 09"),
        h("40 01 5D FE 5D 09 03 B7 18"),
        h("E1 02 00 0C 04 04 13 8A 01"),
        h("40 02 CA"),
    ]
    for payload in payloads:
        bthome_advertisement(capture, "ATC_8D18B2", payload)
        capture.advance(1000)
    prefix = BTHOME + ": "
    return [
        prefix + "unknown-object: %s: unknown object id 0xfe at offset 1 (its length is unknown): 40 fe ca 09"
        % BTHOME_ADDRESS,
        prefix + "unknown-object: %s: unknown object id 0xfe at offset 3 (its length is unknown): "
        "40 01 5d fe 5d 09 03 b7 18" % BTHOME_ADDRESS,
        prefix + "unsupported-version: %s: device info 0xe1 at offset 0 names BTHome version 7, not 2: "
        "e1 02 00 0c 04 04 13 8a 01" % BTHOME_ADDRESS,
        prefix + "truncated-object: %s: object 0x02 at offset 1 needs 2 value bytes, 1 remain: 40 02 ca"
        % BTHOME_ADDRESS,
    ]



# bthome-ble tests/test_v2_encryption.py: test_encryption_example_1 and _2 (MAC 54:48:E6:8F:80:A5, that key).
ENCRYPTED_ADDRESS = "54:48:E6:8F:80:A5"
ENCRYPTED_KEY = "231d39c1d7cc1ab1aee224cd096db932"
ENCRYPTED_EXAMPLE_1 = h("41 A4 72 66 C9 5F 73 00 11 22 33 78 23 72 14")  # 02 CA 09 03 BF 13: 25.06 degC, 50.55 %
ENCRYPTED_EXAMPLE_2 = h("41 87 B9 00 11 22 33 72 B0 23 1F")  # 21 01: motion


def write_keys(name, pairs):
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".keys"), "w") as file:
        for address, key in pairs:
            file.write("%s=%s\n" % (address, key))


def encrypted_advertisement(capture, address, payload):
    data = flags_ad() + service_data_ad(0xFCD2, payload)
    capture.advertising_report(address, data, event_type=0x00, rssi=-60)


def bthome_encrypted_case(capture):
    """bthome-ble tests/test_v2_encryption.py: test_encryption_example_1 (25.06 degC; humidity skipped), sent twice
    (the same counter: a rebroadcast), then test_encryption_example_2 (motion), whose counter 0x33221100 is the same
    as example 1's: a duplicate by the counter rule, skipped before decryption."""
    write_keys("bthome-encrypted", [(ENCRYPTED_ADDRESS, ENCRYPTED_KEY)])
    encrypted_advertisement(capture, ENCRYPTED_ADDRESS, ENCRYPTED_EXAMPLE_1)
    moment = capture.at()
    for payload in [ENCRYPTED_EXAMPLE_1, ENCRYPTED_EXAMPLE_2]:
        capture.advance(1000)
        encrypted_advertisement(capture, ENCRYPTED_ADDRESS, payload)
    device = device_json(localIdentifier=ENCRYPTED_ADDRESS)
    return [sample("IngestQuantityTypeIdentifierAmbientTemperature", 25.06, "degC", moment, source=BTHOME,
                   device=device, metadata=metadata_json())]


def bad_bthome_encrypted_case(capture):
    """Example 1 with one ciphertext bit flipped under the right key (MIC mismatch), and example 1 sent from
    A4:C1:38:8D:18:B2, which has no key; an encrypted packet too short for its counter and MIC (synthetic)."""
    write_keys("bad-bthome-encrypted", [(ENCRYPTED_ADDRESS, ENCRYPTED_KEY)])
    flipped = bytearray(ENCRYPTED_EXAMPLE_1)
    flipped[1] ^= 0x01
    for address, payload in [(ENCRYPTED_ADDRESS, bytes(flipped)), (BTHOME_ADDRESS, ENCRYPTED_EXAMPLE_1),
                             (ENCRYPTED_ADDRESS, h("41 A4 72 66"))]:
        encrypted_advertisement(capture, address, payload)
        capture.advance(1000)
    return [
        BTHOME + ": mic-mismatch: %s: encrypted BTHome frame not decoded" % ENCRYPTED_ADDRESS,
        BTHOME + ": no-key: %s: encrypted BTHome frame not decoded" % BTHOME_ADDRESS,
        BTHOME + ": short-frame: %s: BTHome data of 4 bytes ends before the encrypted objects, counter and MIC at offset 1: "
        "41 a4 72 66" % ENCRYPTED_ADDRESS,
    ]


CASES = [
    Case("bthome-encrypted", bthome_encrypted_case),
    Case("bad-bthome-encrypted", bad_bthome_encrypted_case),
    Case("bthome-mass", bthome_mass_case),
    Case("bthome-temperature", bthome_temperature_case),
    Case("bad-bthome", bad_bthome_case),
]


if __name__ == "__main__":
    generate(__file__, CASES)
